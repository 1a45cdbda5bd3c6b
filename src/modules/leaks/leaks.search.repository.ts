import { type AliasedExpression, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../../db/database.js';
import { ShapeCache } from '../../db/prepared.js';
import { type ListContext, type ListParams, type ListResult, onlyParams } from '../../db/listing.js';
import type { DB } from '../../db/schema.js';
import { type FullTextTerm, ftsQuery, prefixEnd } from '../../domain/leak-record.js';
import { AppError } from '../../http/errors.js';
import type { LeaksRepository, RecordRow } from './leaks.repository.js';
import { type DomainRange, leakSearch } from './leaks.lists.js';
import { type CorpusStats, CorpusStatsReader } from './leaks.search-stats.js';
import { type ShardDomainMerge, ShardSearch } from './leaks.shard-search.js';

/** Seconds a full-text search is asked to wait while a bulk load is indexed (see assertFullTextComplete). */
const FULL_TEXT_RETRY_S = 30;

/** A domain search merges the index ranges of at most this many domains (the domain and its subdomains). */
const MAX_MERGED_DOMAINS = 32;
/** Most words a prefix of `q` is spelled out as (see expandPrefixes); beyond, it runs as a prefix. */
const MAX_PREFIX_COMPLETIONS = 64;
const DOMAIN_SEARCH_PARAMS = new Set(['domain', 'exact_domain', 'exact_count', 'page', 'page_size', 'ordering']);
/** Filters a domain search applies to each domain's records as it reads them in created_at order. */
const DOMAIN_ROW_FILTERS = ['has_password', 'severity', 'leaked_after', 'leaked_before', 'created_after', 'created_before'];
const DOMAIN_FILTERED_PARAMS = new Set([...DOMAIN_SEARCH_PARAMS, ...DOMAIN_ROW_FILTERS]);

type Filtered = SelectQueryBuilder<DB, 'leak_records', object>;

/**
 * PostgreSQL full text: a search whose words the planner expects to match more than this many
 * times its count limit reads its page from the newest records only (see pageFromSlice).
 */
const SLICE_ABOVE = 3;
/** A slice is chosen to hold this many times the page's end, by the planner's estimate. */
const SLICE_MARGIN = 3;
/**
 * A row of a slice read and checked for the words (strpos first, then each word's LIKE) costs
 * about what one match put in the full-text index's bitmap does (0.43 against 0.41 us at 10M),
 * and what this many entries of the words' posting lists read for the bitmap do (0.07 us each:
 * two words in a thirtieth of the records each, 667,000 entries for 11,000 matches, 35-70 ms).
 */
const POSTINGS_PER_ROW = 6;
/** A full-text search with nothing else: its estimate comes from its words' statistics (WordStats). */
const TEXT_ALONE_PARAMS = new Set(['q', 'exact_count', 'page', 'page_size', 'ordering']);
/** SQLite: reading one matching record for its date costs about this many index entries walked (measured at 10M). */
const WALK_ENTRIES_PER_ROW = 12;

/** How pageFromSlice reads a search's matches: their estimated number, and the page of those past a cut of created_at. */
export interface SliceReader {
  /** ANALYZE's statistics of the corpus, that slices are cut from. */
  stats(): Promise<CorpusStats | null>;
  estimate(): Promise<number>;
  /**
   * `cut`: seconds since the epoch; `scan`: each row of the slice checked for the words rather than
   * found through the index; `count`: the search's count (the estimate), as one server's statement carries it.
   */
  page(cut: number, scan: boolean, count: number): Promise<RecordRow[]>;
}

/** Runs /leaks/search/ (and saved searches): the plan of each shape of search, and its queries. */
export class LeakSearches {
  /** The corpus spread over shards: each search asked of them directly (leaks.shard-search.ts). */
  private readonly sharded?: ShardSearch;
  /** ANALYZE's statistics of the corpus (PostgreSQL), that slices are cut from (pageFromSlice). */
  private readonly corpusStats: CorpusStatsReader;

  constructor(
    private readonly database: Database,
    private readonly records: LeaksRepository,
    /** Matches counted at most (THREATMON_SEARCH_COUNT_LIMIT), unless the page ends further or exact_count asks for all. */
    private readonly countLimit: number,
  ) {
    if (database.corpusShards) this.sharded = new ShardSearch(database.db, database.corpusShards);
    this.corpusStats = new CorpusStatsReader(database.db);
  }

  /** A record's JSON text by id (on shards, read from the shard its id's slot names alone). */
  async recordJson(id: string): Promise<string | undefined> {
    return this.sharded ? this.sharded.recordJson(id) : this.records.recordJson(id);
  }

  private get db() {
    return this.database.db;
  }

  /**
   * Count, then the page's ids in order, then those records: the first two read the criterion's
   * index with created_at and id in it, without touching a wide row, however many records match.
   * On PostgreSQL the three are one statement (the first branch below, or searchByDomain's): each
   * round trip costs more there than the queries themselves.
   */
  async search(params: ListParams): Promise<ListResult<string>> {
    const { page, pageSize } = params;
    const ctx = this.listContext();
    // Counting every match of a broad criterion (a source, a has_password) reads every matching
    // row; the page reads an index in order. So the count stops past the limit or the page's end.
    const limit = params.filters.exact_count === true ? null : Math.max(this.countLimit, page * pageSize);
    // Prefixes spelled out (PostgreSQL) before the criteria are applied.
    const terms = params.filters.q as FullTextTerm[] | undefined;
    if (terms) this.assertFullTextComplete();
    const fullText = terms ? await this.expandPrefixes(terms) : undefined;
    if (fullText) params = { ...params, filters: { ...params.filters, q: fullText } };
    // Built when first needed: a key lookup on PostgreSQL reuses its shape's statement instead.
    let filteredQuery: Filtered | undefined;
    const filtered = () => (filteredQuery ??= leakSearch.filter(this.db.selectFrom('leak_records'), params, ctx));
    // A prefix no word of the index starts with: nothing matches, and there is nothing to run.
    if (fullText?.some((t) => t.completions?.length === 0)) return this.pageOfRows({ count: 0, rows: [] }, page, pageSize);
    if (this.sharded) {
      if (fullText !== undefined && limit !== null) {
        const sharded = this.sharded;
        const sliced = await this.pageFromSlice(params, limit, { stats: () => sharded.corpusStats(), estimate: () => sharded.estimate(params), page: (cut, scan) => sharded.slicePage(params, cut, scan) });
        if (sliced) return this.pageOfRows(sliced, page, pageSize);
      }
      const merge = await this.domainMerge(params);
      return this.pageOfRows(await this.sharded.search(params, limit, fullText !== undefined, merge), page, pageSize);
    }
    const pageOf = (qb: Filtered) => leakSearch.pageQuery(qb, params);
    const byDomain = await this.searchByDomain(params, filtered, limit);
    if (byDomain && 'rows' in byDomain) return this.pageOfRows(byDomain, page, pageSize);
    if (!byDomain && this.database.dialect === 'postgres') {
      // Full text counts its matches in the pass that finds them (count(*) over ()): it reads every
      // match to order them anyway. Any other criterion counts from its index in a scalar subquery
      // that PostgreSQL runs once.
      if (fullText !== undefined) {
        if (limit !== null) {
          const sliced = await this.pageFromSlice(params, limit, this.sliceOf(filtered(), params));
          if (sliced) return this.pageOfRows(sliced, page, pageSize);
        }
        const ids = pageOf(filtered().select(['leak_records.id', sql<number>`count(*) over ()`.as('total')]));
        const rows = await this.pageRecordsQuery(ids, sql<number>`page.total`.as('total'), params).execute();
        return this.pageOfRows({ ...capped(rows.length ? Number(rows[0]?.total) : 0, null), rows }, page, pageSize);
      }
      const rows = await this.pageWithCount(params, limit);
      return this.pageOfRows({ ...capped(rows.length ? Number(rows[0]?.total) : 0, limit), rows }, page, pageSize);
    }
    let count: { count: number; countExact: boolean };
    let ids: string[];
    // A page already found by id: a domain's ranges merged, or (SQLite) a common word's walk.
    const listed = byDomain ?? (fullText ? await this.walkNewest(fullText, params, limit) : null);
    if (listed) {
      ({ ids } = listed);
      count = { count: listed.count, countExact: listed.countExact };
    } else if (fullText) {
      // Full text: matching is the cost, so match once and count the matches in the same pass
      // (count(*) over ()). An empty page past the first counts 0: past the end, 404 either way.
      const rows = (await pageOf(filtered().select(['leak_records.id', sql<number>`count(*) over ()`.as('total')])).execute()) as Array<{ id: string; total: number }>;
      count = capped(rows.length ? Number(rows[0]?.total) : 0, null);
      ids = rows.map((r) => r.id);
    } else {
      // Each statement built once per shape of search, as on PostgreSQL (pageWithCount).
      const where = criteria(params);
      const counted = await this.shapes.run(this.db, 'count', { ...where, upTo: countTo(limit) }, (v) => this.counter(this.filteredBy(params, v), v.upTo));
      count = capped(Number(counted[0]?.n ?? 0), limit);
      const { ordering } = params;
      const idRows = await this.shapes.run(this.db, `ids ${ordering.field} ${ordering.desc}`, { ...where, ...pageBounds(params) }, (v) => this.pageOfIds(this.filteredBy(params, v), params, v));
      ids = idRows.map((r) => (r as { id: string }).id);
    }
    const rows = await this.recordsByIds(ids);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const results = ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [r.json] : [];
    });
    return { ...count, page, pageSize, results };
  }

  /**
   * Whether a slice of `share` of the corpus is found by reading its rows, each checked for the
   * words in its text, or by the full-text index's matches ANDed with the slice's blocks: the
   * index's bitmap costs its estimated matches and the posting lists read for them (`postings`,
   * 0 when unknown), which for two common words AND-ed outgrow the matches many times.
   */
  static scansSlice(share: number, records: number, estimate: number, postings: number): boolean {
    return share * records < estimate + postings / POSTINGS_PER_ROW;
  }

  /**
   * PostgreSQL, full text matching many records (by the planner's estimate): the page read from
   * the newest slice of the corpus (oldest, in ascending order), cut where created_at's statistics
   * put a few times the page's end of matches, and found there without reading every match to sort
   * them (see scansSlice). The count is the estimate, not counted. A slice that holds fewer
   * matches than the page's end is widened; every record newer than the cut is in the slice, so
   * the page is right whatever the statistics say. Null when the search is not of that shape or
   * the estimate is small: one pass, reading every match, does it all.
   */
  private async pageFromSlice(params: ListParams, limit: number, slice: SliceReader): Promise<{ count: number; countExact: boolean; countEstimated: boolean; rows: RecordRow[] } | null> {
    if (params.ordering.field !== 'created_at') return null;
    const { page, pageSize } = params;
    const stats = await slice.stats();
    if (!stats) return null;
    // `q` alone: its words' statistics give the planner's estimate without asking it.
    const alone = onlyParams(params, TEXT_ALONE_PARAMS) ? stats.words : undefined;
    const guess = alone?.estimate(params.filters.q as FullTextTerm[]);
    const postings = alone?.postings(params.filters.q as FullTextTerm[]) ?? 0;
    const estimate = guess ?? (await slice.estimate());
    if (estimate <= SLICE_ABOVE * limit) return null;
    // Not counted: counting even to the limit builds the index's bitmap of every match, which grows
    // with the corpus (a second per search at 100M records for a common word). Two significant figures.
    const count = Math.max(limit + 1, Number(estimate.toPrecision(2)));
    const desc = params.ordering.desc;
    const firstShare = (SLICE_MARGIN * page * pageSize) / estimate;
    for (let share = firstShare; share < 1; share *= 4) {
      const cut = stats.created.cut(share, desc);
      if (cut === null) break;
      // Chosen again as the slice widens: a slice too big to read row by row goes through the index.
      const rows = await slice.page(cut, LeakSearches.scansSlice(share, stats.records, estimate, postings), count);
      if (rows.length === pageSize) return { count, countExact: false, countEstimated: true, rows };
    }
    return null;
  }

  /** One server's slices (pageFromSlice): the planner's estimate, and a slice's page in one statement. */
  private sliceOf(filtered: Filtered, params: ListParams): SliceReader {
    // The slice read row by row: built when first chosen.
    let scanned: Filtered | undefined;
    return {
      stats: () => this.corpusStats.get(),
      estimate: () => this.estimatedRows(filtered),
      page: (cut, scan, count) => {
        const matched = scan ? (scanned ??= leakSearch.filter(this.db.selectFrom('leak_records'), params, { ...this.listContext(), fullTextScan: true })) : filtered;
        const slice = matched.where('leak_records.created_at', params.ordering.desc ? '>=' : '<=', sql<string>`to_timestamp(${cut})`);
        return this.pageRecordsQuery(leakSearch.pageQuery(slice.select('leak_records.id'), params), sql<number>`${count}::int8`.as('total'), params).execute();
      },
    };
  }

  /**
   * SQLite, `q` alone matching many records: the full-text index counts the matches by itself (up
   * to `limit`), and the page comes from walking created_at's index newest first (oldest,
   * ascending), each record checked against the set of matches, until the page is full. That walk
   * reads about (records / matches) x the page's end index entries; reading every match for its
   * date, as one pass does, costs about 12 such entries each. Null when one pass costs less.
   */
  private async walkNewest(terms: FullTextTerm[], params: ListParams, limit: number | null): Promise<{ count: number; countExact: boolean; ids: string[] } | null> {
    const raw = this.database.sqlite;
    if (!raw || params.ordering.field !== 'created_at' || !onlyParams(params, TEXT_ALONE_PARAMS)) return null;
    const { page, pageSize } = params;
    const records = (raw.prepare('select max(rowid) as n from leak_records').get() as { n: number | null }).n ?? 0;
    // Past this many matches the walk costs less; they are counted at least that far.
    const worth = Math.ceil(Math.sqrt((records * page * pageSize) / WALK_ENTRIES_PER_ROW));
    const match = ftsQuery(terms);
    const matches = limit === null ? 'leak_records_fts where leak_records_fts match ?' : `(select rowid from leak_records_fts where leak_records_fts match ? limit ${Math.max(limit, worth) + 1})`;
    const found = (raw.prepare(`select count(*) as n from ${matches}`).get(match) as { n: number }).n;
    if (found <= worth) return null;
    const dir = params.ordering.desc ? 'desc' : 'asc';
    const rows = raw
      .prepare(
        `select id from leak_records indexed by leak_records_created_idx
          where rowid in (select rowid from leak_records_fts where leak_records_fts match ?)
          order by created_at ${dir}, id ${dir} limit ? offset ?`,
      )
      .all(match, pageSize, (page - 1) * pageSize) as Array<{ id: string }>;
    return { ...capped(found, limit), ids: rows.map((r) => r.id) };
  }

  /** The planner's estimate of the rows `filtered` matches (EXPLAIN: planned, not run). */
  private async estimatedRows(filtered: Filtered): Promise<number> {
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json) ${filtered.select(sql<number>`1`.as('one'))}`.execute(this.db);
    return Number(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
  }

  /** PostgreSQL: the records of a page's ids (a query), in order, each with `total` as a column: one statement. */
  private pageRecordsQuery(ids: ReturnType<typeof leakSearch.pageQuery>, total: AliasedExpression<unknown, 'total'>, params: ListParams) {
    return leakSearch.order(this.records.recordsQuery().innerJoin(ids.as('page'), 'page.id', 'leak_records.id').select(total), params) as SelectQueryBuilder<
      DB,
      'leak_records',
      RecordRow & { total: number }
    >;
  }

  /** Records by id (SQLite: a page found by id). */
  private async recordsByIds(ids: string[]): Promise<RecordRow[]> {
    if (!ids.length) return [];
    return (await this.shapes.run(this.db, 'records', { ids }, (v) => this.records.recordsQuery().where('leak_records.id', 'in', v.ids))) as RecordRow[];
  }

  private readonly shapes = new ShapeCache();

  private listContext(): ListContext {
    return { dialect: this.database.dialect };
  }

  /**
   * PostgreSQL, any criterion but full text and a domain's merge: the page's records with the
   * count as a column, in one statement, built once per shape of search (its filters, ordering and
   * whether the count stops) and then only bound: building and compiling it with Kysely was a
   * quarter of a key lookup's time in the API process.
   */
  private async pageWithCount(params: ListParams, limit: number | null) {
    const { ordering } = params;
    const values = { ...criteria(params), ...pageBounds(params), countTo: countTo(limit) };
    return this.shapes.run(this.db, `page ${ordering.field} ${ordering.desc}`, values, (v) => {
      const filtered = this.filteredBy(params, v);
      return this.pageRecordsQuery(this.pageOfIds(filtered, params, v), this.counter(filtered, v.countTo).as('total'), params);
    });
  }

  /** The ids of a page of `filtered`, in order, its bounds given as values (a ShapeCache's placeholders): leakSearch.pageQuery's. */
  private pageOfIds(filtered: Filtered, params: ListParams, bounds: ReturnType<typeof pageBounds>) {
    return leakSearch.order(filtered.select('leak_records.id'), params).limit(bounds.pageSize).offset(bounds.offset);
  }

  /** The search's criteria applied with `where`'s values (a ShapeCache's placeholders). */
  private filteredBy(params: ListParams, where: Pick<ListParams, 'filters' | 'ranges' | 'search'>): Filtered {
    return leakSearch.filter(this.db.selectFrom('leak_records'), { ...params, ...where }, this.listContext());
  }

  /** The matches of `filtered` counted, all of them (`upTo` null) or at most `upTo` (see countTo()). */
  private counter(filtered: Filtered, upTo: number | null) {
    if (upTo === null) return filtered.select((eb) => eb.fn.countAll<number>().as('n'));
    return this.db
      .selectFrom(filtered.select(sql<number>`1`.as('one')).limit(upTo).as('matches'))
      .select((eb) => eb.fn.countAll<number>().as('n'));
  }

  /**
   * SQLite: while a bulk load is in progress, or was abandoned and not yet finished, the full-text
   * index lacks the records it loaded: a full-text search would answer a count that leaves them out.
   * It answers 503 with Retry-After instead (every other criterion reads the table, and is right).
   */
  private assertFullTextComplete(): void {
    const raw = this.database.sqlite;
    if (!raw) return;
    this.bulkLoadRow ??= raw.prepare('select 1 from leak_bulk_loads');
    if (this.bulkLoadRow.get()) {
      throw new AppError('unavailable', 503, 'Full-text search is unavailable while a bulk load of the leak corpus is indexed; every other criterion answers. Retry later.', {
        headers: { 'retry-after': String(FULL_TEXT_RETRY_S) },
        body: { retry_after: FULL_TEXT_RETRY_S },
      });
    }
  }

  private bulkLoadRow?: { get(): unknown };

  /**
   * PostgreSQL: each prefix term (`jam*`) with the words of the records that start with it (james,
   * jamie), from leak_words: GIN gathers every word of a prefix into a bitmap of its own before it
   * intersects, so the words spelled out intersect several times faster. A prefix of more than MAX_PREFIX_COMPLETIONS words, or of other than a-z and 0-9 (which the
   * database may fold otherwise than JavaScript), runs as a prefix. SQLite gains nothing from this
   * (its FTS5 index lists its words only by reading their postings, as the prefix does): the
   * terms stay as they are.
   */
  async expandPrefixes(terms: FullTextTerm[]): Promise<FullTextTerm[]> {
    if (this.database.dialect !== 'postgres') return terms;
    return Promise.all(
      terms.map(async (t) => {
        const last = t.words.at(-1) as string;
        if (t.kind !== 'prefix' || !/^[a-z0-9]+$/.test(last)) return t;
        const rows = await this.db
          .selectFrom('leak_words')
          .select('word')
          .where('word', '>=', last)
          .where('word', '<', prefixEnd(last) as string)
          .orderBy('word')
          .limit(MAX_PREFIX_COMPLETIONS + 1)
          .execute();
        const words = rows.map((r) => r.word);
        if (words.length > MAX_PREFIX_COMPLETIONS || !words.every((w) => /^[\p{L}\p{N}]+$/u.test(w))) return t;
        return { ...t, completions: words };
      }),
    );
  }

  /** A page of records already in order; an empty page past the first is past the end (count 0: 404). */
  private pageOfRows(found: { count: number; countExact?: boolean; countEstimated?: boolean; rows: RecordRow[] }, page: number, pageSize: number): ListResult<string> {
    const past = found.rows.length === 0 && page > 1;
    const estimated = !past && found.countEstimated === true ? { countEstimated: true } : {};
    return { count: past ? 0 : found.count, countExact: past || (found.countExact ?? true), ...estimated, page, pageSize, results: found.rows.map((r) => r.json) };
  }

  /**
   * Whether the search is a domain's merge (see searchByDomain): by domain, in created_at order,
   * filtered by nothing but DOMAIN_ROW_FILTERS; with the query of its domains (and their counts).
   */
  private domainShape(params: ListParams) {
    const range = params.filters.domain as DomainRange | undefined;
    if (params.ordering.field !== 'created_at' || !onlyParams(params, DOMAIN_FILTERED_PARAMS) || !range) return null;
    const rowFiltered = Object.keys(params.given).some((k) => !DOMAIN_SEARCH_PARAMS.has(k));
    const { from, end } = range;
    let keysQuery = this.db.selectFrom('leak_domain_counts').select(['key', 'n']).where('n', '>', 0);
    keysQuery = end === null ? keysQuery.where('key', '=', from) : keysQuery.where('key', '>=', from).where('key', '<', end);
    return { keysQuery: keysQuery.limit(MAX_MERGED_DOMAINS + 1), rowFiltered };
  }

  /** Shards: a domain's merge, its domains and (unfiltered) their total; null when the search is not one, or spans too many domains. */
  private async domainMerge(params: ListParams): Promise<ShardDomainMerge | null> {
    const shape = this.domainShape(params);
    if (!shape) return null;
    const keys = await shape.keysQuery.execute();
    if (keys.length > MAX_MERGED_DOMAINS) return null;
    return { keys: keys.map((k) => k.key), total: shape.rowFiltered ? null : keys.reduce((sum, k) => sum + Number(k.n), 0) };
  }

  /**
   * A search by domain, in created_at order: the page is merged from each matching domain's own
   * (domain_rev, created_at, id) index range, read in order and no further than the page (its
   * records filtered as they are read, when has_password, severity or a date range is given).
   * Without this, a domain holding a large share of the corpus (a webmail) means sorting all its
   * records for each page. The count of a domain alone is a sum over leak_domain_counts; with
   * filters it is counted, up to `limit`. Null when the search is not of that shape, or spans more
   * domains than are worth merging. On PostgreSQL the merge and the records are one statement (a
   * lateral scan per domain), on SQLite a query each.
   */
  private async searchByDomain(
    params: ListParams,
    filtered: () => Filtered,
    limit: number | null,
  ): Promise<{ count: number; countExact: boolean; ids: string[] } | { count: number; countExact: boolean; rows: RecordRow[] } | null> {
    const { page, pageSize } = params;
    const shape = this.domainShape(params);
    if (!shape) return null;
    const { keysQuery, rowFiltered } = shape;
    const direction = params.ordering.desc ? 'desc' : 'asc';
    const wanted = page * pageSize;
    // One domain's matches in order, up to the page's end: the filters but the domain range, on one key.
    const { domain: _domain, ...rowFilters } = params.filters;
    const domainRows = (key: string | ReturnType<typeof sql.ref>) =>
      leakSearch
        .filter(this.db.selectFrom('leak_records'), { ...params, filters: rowFilters }, this.listContext())
        .select(['leak_records.id', 'leak_records.created_at'])
        .where('leak_records.domain_rev', '=', key as string)
        .orderBy('leak_records.created_at', direction)
        .orderBy('leak_records.id', direction)
        .limit(wanted);
    if (this.database.dialect === 'postgres') {
      // One statement: the matching domains, their total, and the page merged from one lateral
      // index scan per domain, joined to its records. No row: no such domain, or a page past the
      // end (404 either way, as page 1 of a domain with records is never empty), or with filters
      // nothing that passes them: then the plain plan answers, knowing how many domains there are.
      const dir = sql.raw(direction);
      const ids = sql<{ id: string }>`(select p.id from keys
        cross join lateral ${domainRows(sql.ref('keys.key'))} as p
        order by p.created_at ${dir}, p.id ${dir} limit ${pageSize} offset ${(page - 1) * pageSize})`;
      const total = rowFiltered ? sql<number>`${this.counter(filtered(), countTo(limit))}` : sql<number>`(select coalesce(sum(n), 0) from keys)`;
      const totals = sql<{ total: number; domains: number }>`(select ${total} as total, (select count(*) from keys) as domains)`;
      const rows = (await this.db
        .with('keys', () => keysQuery)
        .selectFrom('leak_records')
        .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
        .select(this.records.recordColumns())
        .innerJoin(ids.as('page'), 'page.id', 'leak_records.id')
        .innerJoin(totals.as('totals'), (join) => join.onTrue())
        .select(['totals.total', 'totals.domains'])
        .orderBy('leak_records.created_at', direction)
        .orderBy('leak_records.id', direction)
        .execute()) as Array<RecordRow & { total: number; domains: number }>;
      if (rows.length ? Number(rows[0]?.domains) > MAX_MERGED_DOMAINS : rowFiltered) return null;
      return { ...capped(rows.length ? Number(rows[0]?.total) : 0, rowFiltered ? limit : null), rows };
    }
    const keys = await keysQuery.execute();
    if (keys.length > MAX_MERGED_DOMAINS) return null;
    const count = rowFiltered
      ? capped(Number((await this.counter(filtered(), countTo(limit)).executeTakeFirst())?.n ?? 0), limit)
      : capped(
          keys.reduce((sum, k) => sum + Number(k.n), 0),
          null,
        );
    const rows: Array<{ id: string; created_at: string }> = [];
    for (const { key } of keys) rows.push(...((await domainRows(key).execute()) as typeof rows));
    const sign = direction === 'asc' ? 1 : -1;
    rows.sort((a, b) => sign * (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { ...count, ids: rows.slice((page - 1) * pageSize, wanted).map((r) => r.id) };
  }
}

/** A search's criteria: the values its statements are bound with, beside its page's bounds (ShapeCache). */
function criteria({ filters, ranges, search }: ListParams): Pick<ListParams, 'filters' | 'ranges' | 'search'> {
  return { filters, ranges, search };
}

/** Where a search's page starts and how long it is, as a statement's LIMIT and OFFSET take them. */
function pageBounds({ page, pageSize }: ListParams): { pageSize: number; offset: number } {
  return { pageSize, offset: (page - 1) * pageSize };
}

/** How many matches a count stopping past `limit` reads: one more, to tell that there are more (null: all). */
function countTo(limit: number | null): number | null {
  return limit === null ? null : limit + 1;
}

/** `found` matches of a count that stopped at one past `limit` (null: it counted them all). */
function capped(found: number, limit: number | null): { count: number; countExact: boolean } {
  return limit !== null && found > limit ? { count: limit, countExact: false } : { count: found, countExact: true };
}
