import { type AliasedExpression, type Expression, type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { type CorpusShards, routeSlot, type ShardPart, slotOfId } from '../../db/corpus-shards.js';
import type { ListContext, ListParams } from '../../db/listing.js';
import { ShapeCache } from '../../db/prepared.js';
import type { DB } from '../../db/schema.js';
import { leakSearch } from './leaks.lists.js';
import { type RecordRow, SHARD_RECORD_JSON } from './leaks.repository.js';
import { type CorpusStats, CorpusStatsReader } from './leaks.search-stats.js';

/**
 * The search of a corpus spread over shards (THREATMON_CORPUS_SHARDS), asked of each shard
 * directly rather than through the main database's foreign tables: each shard finds its first
 * matches up to the page's end in order, with their sort keys, and counts its own matches; the
 * pages are merged here and the counts added. Through postgres_fdw, every match of a count came
 * back to the main database to be counted, and every statement cost a planning of its own there.
 */

/** How a shard counts its matches: with the matches it reads (full text), up to a limit in the same statement, or not at all. */
type CountMode = 'window' | 'upTo' | 'none';

/** A domain search merged from each domain's index range (LeakSearches.domainMerge): its domains and, unfiltered, its total. */
export interface ShardDomainMerge {
  keys: string[];
  /** The total of leak_domain_counts, when no filter but the domain applies (else counted). */
  total: number | null;
}

/** A slice of the matches (LeakSearches.pageFromSlice): those past `cut` (seconds), each row read (`scan`) or found through the index. */
interface Slice {
  cut: number;
  scan: boolean;
}

/** A shard's match: its id, its sort key (the ordering column as sortable text) and the shard's count. */
interface Hit {
  id: string;
  k: string | null;
  total?: number | null;
  /** The record's text, when read with it (without its source's name). */
  json?: string;
}

/** What a shard's statements are built for. */
const CTX: ListContext = { dialect: 'postgres' };

/** The ordering column as text that sorts as it does (microseconds, UTC, fixed width); null stays null. */
const sortKey = (column: Expression<unknown>) => sql<string | null>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;

/** Where the source's name is in a shard's record text: after `{"id":"<uuid>","source":{"id":"<uuid>`. */
const NAME_AT = 97;
const NAMELESS = '","name":null}';

/** A shard's record text with its source's name written in. */
export function withSourceName(json: string, name: string | null): string {
  if (json.startsWith(NAMELESS, NAME_AT)) return `${json.slice(0, NAME_AT)}","name":${JSON.stringify(name)}}${json.slice(NAME_AT + NAMELESS.length)}`;
  const record = JSON.parse(json) as { source: { name: string | null } };
  record.source.name = name;
  return JSON.stringify(record);
}

export class ShardSearch {
  private readonly shapes = new ShapeCache();

  constructor(
    private readonly main: Kysely<DB>,
    private readonly shards: CorpusShards,
  ) {}

  /**
   * A page of the search and its count. `limit`: the count stops past it (null: every match);
   * `fullText`: every match is read to be ordered, so it is counted in the same pass; `merge`: a
   * domain search read from each domain's range of the index. The rows are the page's records in order.
   */
  async search(params: ListParams, limit: number | null, fullText: boolean, merge: ShardDomainMerge | null, slice?: Slice): Promise<{ count: number; countExact: boolean; rows: RecordRow[] }> {
    const { page, pageSize } = params;
    const mode: CountMode = slice ? 'none' : fullText ? 'window' : merge?.total !== null && merge ? 'none' : 'upTo';
    const countTo = mode === 'upTo' && limit !== null ? limit + 1 : null;
    // Every record of an address is in the slot its hash names: one shard is asked, for the page itself.
    const email = params.filters.email as string | undefined;
    const slots = email ? [routeSlot(email)] : undefined;
    // Else each shard's first matches up to the page's end, merged here.
    const bounds = slots ? { skip: (page - 1) * pageSize, take: pageSize } : { skip: 0, take: page * pageSize };
    // Page 1 (or one shard): the records come with their ids, one statement a shard. A later page
    // of several shards, or a domain's merge (its records joined to the merge planned slower than
    // read after: 154 against 237 searches/s), reads the records of its merged ids after.
    const withRecords = slots !== undefined || (page === 1 && !merge);
    for (let attempt = 1; ; attempt++) {
      const { results: parts, version } = await this.shards.readEach(
        this.main,
        (part) => (merge ? this.domainPart(part, params, bounds.take, countTo, merge, mode) : this.part(part, params, bounds, countTo, mode, withRecords, slice)),
        slots,
      );
      const sign = params.ordering.desc ? -1 : 1;
      const hits = parts.flat().sort((a, b) => sign * compareHits(a, b));
      // A shard with no match in its first rows has none at all: its count is 0.
      const found = parts.reduce((n, rows) => n + Number(rows[0]?.total ?? 0), 0);
      const count = mode === 'none' ? { count: merge?.total ?? 0, countExact: true } : countTo !== null && found > (limit as number) ? { count: limit as number, countExact: false } : { count: found, countExact: true };
      const pageHits = slots ? hits : hits.slice(bounds.take - pageSize, bounds.take);
      const records = withRecords ? (pageHits as Array<Hit & RecordRow>) : await this.recordTexts(pageHits.map((h) => h.id));
      // The sources' names, and the layout as it is now: a search that raced a move is asked again.
      const { names, layout } = await this.sourceNames(records);
      if (await this.shards.layoutChanged(this.main, version, layout, attempt)) continue;
      return { ...count, rows: named(records, names) };
    }
  }

  /**
   * One shard's first matches (`take` of them past `skip`), in order, each with its count (see
   * CountMode) and, `withRecords`, its record's text.
   */
  private async part(part: ShardPart, params: ListParams, bounds: { skip: number; take: number }, countTo: number | null, mode: CountMode, withRecords: boolean, slice?: Slice): Promise<Hit[]> {
    const { ordering, filters, ranges, search } = params;
    const key = `page ${part.key} ${ordering.field} ${ordering.desc} ${mode} ${withRecords} ${slice ? `slice ${slice.scan}` : ''}`;
    return (await this.shapes.run(part.db, key, { filters, ranges, search, ...bounds, countTo, cut: slice?.cut ?? null }, (v) => {
      const filtered = () => {
        const q = leakSearch.filter(part.records(), { ...params, ...v }, { ...CTX, fullTextScan: slice?.scan === true });
        return v.cut === null ? q : q.where('leak_records.created_at', ordering.desc ? '>=' : '<=', sql<string>`to_timestamp(${v.cut})`);
      };
      let q = leakSearch.order(filtered().select(['leak_records.id', sortKey(leakSearch.orderColumn(ordering.field)).as('k')]), params).limit(v.take).offset(v.skip) as SelectQueryBuilder<DB, 'leak_records', Hit>;
      if (mode === 'window') q = q.select(sql<number>`count(*) over ()`.as('total'));
      if (mode === 'upTo') q = q.select(counter(filtered(), v.countTo).as('total'));
      return withRecords ? withTexts(part, q.as('hits')) : q;
    })) as Hit[];
  }

  /**
   * One shard's first `wanted` matches of a domain search, merged from one index range per domain
   * (a lateral scan each, as on one server): a domain holding a large share of the corpus is never sorted.
   */
  private async domainPart(part: ShardPart, params: ListParams, wanted: number, countTo: number | null, merge: ShardDomainMerge, mode: CountMode): Promise<Hit[]> {
    const direction = params.ordering.desc ? 'desc' : 'asc';
    const dir = sql.raw(direction);
    const { domain: _domain, ...rowFilters } = params.filters;
    const domainRows = (key: Expression<unknown>) =>
      leakSearch
        .filter(part.records(), { ...params, filters: rowFilters }, CTX)
        .select(['leak_records.id', 'leak_records.created_at'])
        .where('leak_records.domain_rev', '=', key as Expression<string>)
        .orderBy('leak_records.created_at', direction)
        .orderBy('leak_records.id', direction)
        .limit(wanted);
    // The domains as a VALUES list, each scanned in the index order of its own range.
    const keys = sql.join(merge.keys.map((k) => sql`(${k})`));
    const total = mode === 'upTo' ? sql`, ${counter(leakSearch.filter(part.records(), params, CTX), countTo)} as total` : sql``;
    const { rows } = await sql<Hit>`select p.id, ${sortKey(sql.ref('p.created_at'))} as k ${total}
      from (values ${keys}) as keys(key) cross join lateral (${domainRows(sql.ref('keys.key'))}) as p
      order by p.created_at ${dir}, p.id ${dir} limit ${wanted}`.execute(part.db);
    return rows;
  }

  /** The planner's estimate of the search's matches: each shard's, added (LeakSearches.pageFromSlice). */
  async estimate(params: ListParams): Promise<number> {
    const { results } = await this.shards.readEach(this.main, async (part) => {
      const q = leakSearch.filter(part.records(), params, CTX).select(sql<number>`1`.as('one'));
      const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json) ${q}`.execute(part.db);
      return Number(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
    });
    return results.reduce((sum, n) => sum + n, 0);
  }

  private readonly statsReaders = new Map<Kysely<DB>, CorpusStatsReader>();

  /**
   * ANALYZE's statistics of the corpus, from the shards' own (the main database has none: its
   * records are foreign tables): created_at's spread from the first shard that has statistics (a
   * record's slot is a hash, so each shard's spread is the corpus's), the records added up.
   */
  async corpusStats(): Promise<CorpusStats | null> {
    const { results } = await this.shards.readEach(this.main, (part) => {
      let reader = this.statsReaders.get(part.db);
      if (!reader) this.statsReaders.set(part.db, (reader = new CorpusStatsReader(part.db)));
      return reader.get();
    });
    const first = results.find((r) => r !== null);
    if (!first) return null;
    // The words' statistics are per slot table on a shard: estimates come from each shard's planner (estimate()).
    return { records: results.reduce((n, r) => n + (r?.records ?? 0), 0), created: first.created, words: null };
  }

  /** The page of a full-text search's matches past a cut of created_at (LeakSearches.pageFromSlice), merged from every shard. */
  async slicePage(params: ListParams, cut: number, scan: boolean): Promise<RecordRow[]> {
    return (await this.search(params, null, true, null, { cut, scan })).rows;
  }

  /** Records' texts by id, each from the shard its slot names (without their sources' names). */
  private async recordTexts(ids: string[]): Promise<RecordRow[]> {
    if (!ids.length) return [];
    const { results } = await this.shards.readEach(
      this.main,
      (part) => {
        const mine = ids.filter((id) => part.slots.includes(slotOfId(id)));
        return this.shapes.run(part.db, `records ${part.key}`, { ids: mine }, (v) =>
          part.records().select(['leak_records.id', SHARD_RECORD_JSON.as('json')]).where('leak_records.id', 'in', v.ids),
        ) as Promise<RecordRow[]>;
      },
      [...new Set(ids.map(slotOfId))],
    );
    const byId = new Map(results.flat().map((r) => [r.id, r.json]));
    return ids.flatMap((id) => {
      const json = byId.get(id);
      return json === undefined ? [] : [{ id, json }];
    });
  }

  /** The names of the records' sources (main database), with the corpus layout's version read in the same statement. */
  private async sourceNames(records: RecordRow[]): Promise<{ names: Map<string, string>; layout: number }> {
    const ids = [...new Set(records.map((r) => sourceIdOf(r.json)))];
    const { rows } = await sql<{ id: string | null; name: string | null; layout: number }>`select id::text as id, name, (select version from corpus_layout) as layout
      from leak_sources where id = any(${ids}::uuid[])
      union all select null, null, (select version from corpus_layout)`.execute(this.main);
    const names = new Map(rows.flatMap((r) => (r.id !== null && r.name !== null ? [[r.id, r.name] as const] : [])));
    return { names, layout: Number(rows[0]?.layout) };
  }

  /** The record's text, from its slot's shard alone. */
  async recordJson(id: string): Promise<string | undefined> {
    const records = await this.recordTexts([id]);
    if (!records.length) return undefined;
    return named(records, (await this.sourceNames(records)).names)[0]?.json;
  }
}

/**
 * Shards: the texts of records written in `trx`'s batch, read through that batch's own transaction
 * on each shard (a foreign scan from the main database does not see rows not committed yet), with
 * their sources' names written in. None when `trx` wrote no records: it opens no shard transaction.
 */
export async function batchRecordTexts(shards: CorpusShards, trx: Kysely<DB>, ids: readonly string[]): Promise<Map<string, string>> {
  const batch = shards.batchOf(trx);
  if (!batch) return new Map();
  const records: RecordRow[] = [];
  for (const [position, list] of shards.byShard(ids, (id) => id)) {
    const q = shards.kyselyOf(position).selectFrom('leak_records').select(['leak_records.id', SHARD_RECORD_JSON.as('json')]).where('leak_records.id', 'in', list).compile();
    records.push(...(await batch.read<RecordRow>(position, q.sql, q.parameters)));
  }
  const sourceIds = [...new Set(records.map((r) => sourceIdOf(r.json)))];
  const names = sourceIds.length ? await trx.selectFrom('leak_sources').select(['id', 'name']).where('id', 'in', sourceIds).execute() : [];
  return new Map(named(records, new Map(names.map((n) => [n.id, n.name]))).map((r) => [r.id, r.json]));
}

/** The id of a shard record's source, from its text (see NAME_AT). */
const sourceIdOf = (json: string) => json.slice(NAME_AT - 36, NAME_AT);

/** Records with their sources' names written in. */
function named(records: RecordRow[], names: Map<string, string>): RecordRow[] {
  return records.map((r) => ({ id: r.id, json: withSourceName(r.json, names.get(sourceIdOf(r.json)) ?? null) }));
}

/** A shard's matches (`hits`: id, k and maybe total) with their records' texts: the records joined by id. */
function withTexts(part: ShardPart, hits: AliasedExpression<Hit, 'hits'>) {
  // The shard's records are a table expression of its own (ShardPart.records): typed loosely here.
  const records = part.records() as unknown as SelectQueryBuilder<Record<string, Record<string, unknown>>, 'leak_records', object>;
  return records.innerJoin(hits, 'hits.id', 'leak_records.id').selectAll('hits').select(SHARD_RECORD_JSON.as('json')) as unknown as SelectQueryBuilder<DB, 'leak_records', Hit & RecordRow>;
}

/** Ascending order of (sort key, id), nulls last, as PostgreSQL orders them. */
function compareHits(a: Hit, b: Hit): number {
  if (a.k !== b.k) {
    if (a.k === null) return 1;
    if (b.k === null) return -1;
    return a.k < b.k ? -1 : 1;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The matches of `filtered` counted, all of them (`upTo` null) or at most `upTo`, as a scalar subquery. */
function counter(filtered: SelectQueryBuilder<DB, 'leak_records', object>, upTo: number | null) {
  const n = sql<number>`count(*)`;
  if (upTo === null) return filtered.select(n.as('n'));
  return sql<number>`(select ${n} from ${filtered.select(sql<number>`1`.as('one')).limit(upTo)} as matches)`;
}
