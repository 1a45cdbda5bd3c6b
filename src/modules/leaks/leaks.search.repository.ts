import { type QueryCreator, sql } from 'kysely';
import { type TObject, Type } from 'typebox';
import { normaliseDomain, normaliseEmail } from '../../domain/ioc.js';
import { domainKeyRange, type FullTextTerm, ftsQuery, ipKeyRange, normalisePhone, parseFullText, prefixEnd, tsQuery } from '../../domain/leak-record.js';
import { AppError } from '../../http/errors.js';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { given, invalidPage, type ListContext, type ListQuery, type ListResult, Listing, listResult, onlyParams, pageParams, toTimestamp } from '../../http/listing.js';
import type { LeaksRepository, RecordRow } from './leaks.repository.js';

const bad = (field: string, message: string) => new AppError('invalid_query', 400, `${field}: ${message}`, { errors: [{ field, message }] });

const str = (description: string, maxLength = 500) => ({ type: 'string', maxLength, description }) as never;

/**
 * The reversed-domain keys a `domain` search covers: `from` alone with exact_domain, else
 * "com.example." up to "com.example/" ('/' follows '.'), the domain and all its subdomains.
 */
export function domainRange(value: unknown, query: Record<string, unknown>): { from: string; end: string | null } {
  const n = normaliseDomain(String(value).replace(/\[\.\]/g, '.'));
  if (!n.ok) throw bad('domain', n.error);
  const { from, below } = domainKeyRange(n.value);
  const exact = query.exact_domain === true || query.exact_domain === 'true';
  return { from, end: exact ? null : below };
}

export interface LeakSearchContext extends ListContext {
  /** `q` parsed, its prefixes spelled out where that is faster. */
  fullText?: FullTextTerm[];
}

/** The criteria of /leaks/search/ (and of saved searches), each with its index-friendly condition. */
export const leakSearch = new Listing({
  filters: {
    q: {
      kind: 'custom',
      schema: str('Full text over every text field: words are AND-ed, `"a phrase"` matches words in order, `prefix*` matches the start of a word. A word is a run of letters or of digits, in the records as in `q`: `harris6915` is the phrase harris 6915, and `harri*` finds harris6915. Records loaded by a bulk load (`import-leaks --bulk`, SQLite) are found by full text once the load has finished; every other criterion finds them at once.'),
      apply: (qb, value, ctx) => {
        // The service passes the terms with their prefixes spelled out (LeaksService.expandPrefixes).
        const terms = (ctx as LeakSearchContext).fullText ?? parseFullText(String(value));
        if (terms.length === 0) throw bad('q', 'needs at least one word');
        return ctx.dialect === 'postgres'
          ? qb.where(sql<boolean>`leak_records.search_vector @@ to_tsquery('simple', ${tsQuery(terms)})`)
          : qb.where(sql<boolean>`leak_records.rowid in (select rowid from leak_records_fts where leak_records_fts match ${ftsQuery(terms)})`);
      },
    },
    email: {
      kind: 'custom',
      schema: str('Exact e-mail address (case-insensitive, defanged forms accepted).', 320),
      apply: (qb, value) => {
        const n = normaliseEmail(String(value).replace(/\[@\]/g, '@').replace(/\[\.\]/g, '.'));
        if (!n.ok) throw bad('email', 'must be an e-mail address');
        return qb.where('leak_records.email', '=', n.value);
      },
    },
    domain: {
      kind: 'custom',
      schema: str('Domain: records of it and of its subdomains (unless exact_domain=true), by e-mail domain or domain field.', 253),
      apply: (qb, value, ctx) => {
        const range = domainRange(value, ctx.query ?? {});
        return range.end === null
          ? qb.where('leak_records.domain_rev', '=', range.from)
          : qb.where('leak_records.domain_rev', '>=', range.from).where('leak_records.domain_rev', '<', range.end);
      },
    },
    exact_domain: { kind: 'custom', schema: Type.Boolean({ description: 'With domain: only that exact domain, no subdomains.' }) as never, apply: (qb) => qb },
    username: {
      kind: 'custom',
      schema: str('Exact username, case-insensitive.', 256),
      apply: (qb, value) => qb.where('leak_records.username_lower', '=', String(value).trim().toLowerCase()),
    },
    ip: {
      kind: 'custom',
      schema: str('An IP address, or a CIDR range such as 203.0.113.0/24.', 64),
      apply: (qb, value) => {
        const range = ipKeyRange(String(value).trim().replace(/\[\.\]/g, '.'));
        if (!range) throw bad('ip', 'must be an IP address or CIDR range');
        return range[0] === range[1]
          ? qb.where('leak_records.ip_key', '=', range[0])
          : qb.where('leak_records.ip_key', '>=', range[0]).where('leak_records.ip_key', '<=', range[1]);
      },
    },
    phone: {
      kind: 'custom',
      schema: str('Phone number; punctuation and a leading + are ignored.', 40),
      apply: (qb, value) => {
        const n = normalisePhone(String(value));
        if (!n) throw bad('phone', 'must be a phone number of 6 to 20 digits');
        // With or without the international '+': the same number.
        const digits = n.replace(/^\+/, '');
        return qb.where('leak_records.phone', 'in', [digits, `+${digits}`]);
      },
    },
    source: { kind: 'uuid', column: 'leak_records.source_id', description: 'Only records of this source.' },
    has_password: {
      kind: 'custom',
      schema: Type.Boolean({ description: 'Only records with (true) or without (false) a leaked password.' }) as never,
      apply: (qb, value) => qb.where('leak_records.password_sha1', value === true || value === 'true' ? 'is not' : 'is', null),
    },
    leaked_after: {
      kind: 'custom',
      schema: Type.String({ format: 'date-or-date-time', description: 'Only records leaked at or after this date or time.' }) as never,
      apply: (qb, value) => qb.where('leak_records.leaked_at', '>=', toTimestamp(String(value), 'leaked_after')),
    },
    leaked_before: {
      kind: 'custom',
      schema: Type.String({ format: 'date-or-date-time', description: 'Only records leaked before this date or time.' }) as never,
      apply: (qb, value) => qb.where('leak_records.leaked_at', '<', toTimestamp(String(value), 'leaked_before')),
    },
  },
  ordering: { leaked_at: 'leak_records.leaked_at', created_at: 'leak_records.created_at' },
  idColumn: 'leak_records.id',
  createdColumn: 'leak_records.created_at',
});

export const CRITERIA = ['q', 'email', 'domain', 'username', 'ip', 'phone', 'source'] as const;

export function assertHasCriterion(query: Record<string, unknown>) {
  if (!CRITERIA.some((c) => given(query[c]))) {
    const message = `give at least one of ${CRITERIA.join(', ')}`;
    throw new AppError('invalid_query', 400, message, { errors: [{ field: 'q', message }] });
  }
}


/** The saved-search `query`: the same parameters, but unknown keys refused. */
export const SavedQuerySchema: TObject = (() => {
  const { page: _p, page_size: _ps, ...props } = leakSearch.querystring.properties as Record<string, never>;
  return Type.Object(props, { additionalProperties: false, description: 'The /leaks/search/ parameters (without page and page_size).' });
})();

/** A domain search merges the index ranges of at most this many domains (the domain and its subdomains). */
const MAX_MERGED_DOMAINS = 32;
/** Most words a prefix of `q` is spelled out as (see expandPrefixes); beyond, it runs as a prefix. */
const MAX_PREFIX_COMPLETIONS = 64;
const DOMAIN_SEARCH_PARAMS = new Set(['domain', 'exact_domain', 'page', 'page_size', 'ordering']);

/** Runs /leaks/search/ (and saved searches): the plan of each shape of search, and its queries. */
export class LeakSearches {
  constructor(
    private readonly database: Database,
    private readonly records: LeaksRepository,
  ) {}

  private get db() {
    return this.database.db;
  }

  /**
   * Count, then the page's ids in order, then those records: the first two read the criterion's
   * index with created_at and id in it, without touching a wide row, however many records match.
   * On PostgreSQL the three are one statement (the first branch below, or searchByDomain's): each
   * round trip costs more there than the queries themselves.
   */
  async search(query: ListQuery): Promise<ListResult<string>> {
    assertHasCriterion(query);
    const { page, pageSize } = pageParams(query);
    const ctx: LeakSearchContext = { dialect: this.database.dialect };
    // Every parameter is checked (a bad one is a 400) before anything is read, then prefixes are
    // spelled out (PostgreSQL) and the criteria applied again with them.
    let filtered = leakSearch.filter(this.db.selectFrom('leak_records'), query, ctx);
    const fullText = given(query.q) ? await this.expandPrefixes(parseFullText(String(query.q))) : undefined;
    if (fullText?.some((t) => t.completions)) {
      const expanded: LeakSearchContext = { ...ctx, fullText };
      filtered = leakSearch.filter(this.db.selectFrom('leak_records'), query, expanded);
    }
    // A prefix no word of the index starts with: nothing matches, and there is nothing to run.
    if (fullText?.some((t) => t.completions?.length === 0)) return this.pageOfRows({ count: 0, rows: [] }, page, pageSize);
    const pageOf = (qb: typeof filtered) => leakSearch.order(qb, query).limit(pageSize).offset((page - 1) * pageSize);
    const byDomain = await this.searchByDomain(query, page, pageSize);
    if (byDomain && 'rows' in byDomain) return this.pageOfRows(byDomain, page, pageSize);
    if (!byDomain && this.database.dialect === 'postgres') {
      // Full text counts its matches in the pass that finds them (count(*) over ()); any other
      // criterion counts from its index in a scalar subquery that PostgreSQL runs once.
      const textSearch = given(query.q);
      const ids = pageOf(filtered.select(textSearch ? ['leak_records.id', sql<number>`count(*) over ()`.as('total')] : ['leak_records.id']));
      const total = textSearch ? sql<number>`page.total` : filtered.select((eb) => eb.fn.countAll().as('n'));
      const rows = (await leakSearch
        .order(this.records.recordsQuery().innerJoin(ids.as('page'), 'page.id', 'leak_records.id').select(total.as('total')), query)
        .execute()) as Array<RecordRow & { total: number }>;
      return this.pageOfRows({ count: rows.length ? Number(rows[0]?.total) : 0, rows }, page, pageSize);
    }
    let count: number;
    let ids: string[];
    if (byDomain) {
      ({ count, ids } = byDomain);
    } else if (given(query.q)) {
      // Full text: matching is the cost, so match once and count the matches in the same pass
      // (count(*) over ()). An empty page past the first is past the end: 404 either way.
      const rows = (await pageOf(filtered.select(['leak_records.id', sql<number>`count(*) over ()`.as('total')])).execute()) as Array<{ id: string; total: number }>;
      if (rows.length === 0 && page > 1) throw invalidPage();
      count = rows.length ? Number(rows[0]?.total) : 0;
      ids = rows.map((r) => r.id);
    } else {
      const counted = await filtered.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
      count = Number(counted?.n ?? 0);
      ids = (await pageOf(filtered.select('leak_records.id')).execute()).map((r) => (r as { id: string }).id);
    }
    const rows = ids.length ? ((await this.records.recordsQuery().where('leak_records.id', 'in', ids).execute()) as RecordRow[]) : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return listResult(
      count,
      page,
      pageSize,
      ids.flatMap((id) => {
        const r = byId.get(id);
        return r ? [r.json] : [];
      }),
    );
  }

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

  /** A page of records already in order; an empty page past the first is past the end (404). */
  private pageOfRows(found: { count: number; rows: RecordRow[] }, page: number, pageSize: number): ListResult<string> {
    if (found.rows.length === 0 && page > 1) throw invalidPage();
    return listResult(found.count, page, pageSize, found.rows.map((r) => r.json));
  }

  /**
   * A search by domain alone, in created_at order: the count is a sum over leak_domain_counts, and
   * the page is merged from each matching domain's own (domain_rev, created_at, id) index range, read
   * in order and no further than the page. Without this, a domain holding a large share of the
   * corpus (a webmail) means counting and sorting all its records for each page. Null when the
   * search is not of that shape, or spans more domains than are worth merging. On PostgreSQL the
   * merge and the records are one statement (a lateral scan per domain), on SQLite a query each.
   */
  private async searchByDomain(query: ListQuery, page: number, pageSize: number): Promise<{ count: number; ids: string[] } | { count: number; rows: RecordRow[] } | null> {
    const ordering = query.ordering ?? '-created_at';
    if (ordering !== 'created_at' && ordering !== '-created_at') return null;
    if (!onlyParams(query, DOMAIN_SEARCH_PARAMS) || !given(query.domain)) return null;
    const { from, end } = domainRange(query.domain, query);
    let keysQuery = this.db.selectFrom('leak_domain_counts').select(['key', 'n']).where('n', '>', 0);
    keysQuery = end === null ? keysQuery.where('key', '=', from) : keysQuery.where('key', '>=', from).where('key', '<', end);
    keysQuery = keysQuery.limit(MAX_MERGED_DOMAINS + 1);
    const direction = ordering === 'created_at' ? 'asc' : 'desc';
    const wanted = page * pageSize;
    if (this.database.dialect === 'postgres') {
      // One statement: the matching domains, their total, and the page merged from one lateral
      // index scan per domain, joined to its records. No row: no such domain, or a page past the
      // end (404 either way, as page 1 of a domain with records is never empty).
      const dir = sql.raw(direction);
      const ids = sql<{ id: string }>`(select p.id from keys
        cross join lateral (select id, created_at from leak_records where domain_rev = keys.key order by created_at ${dir}, id ${dir} limit ${wanted}) as p
        order by p.created_at ${dir}, p.id ${dir} limit ${pageSize} offset ${(page - 1) * pageSize})`;
      const totals = sql<{ total: number; domains: number }>`(select coalesce(sum(n), 0) as total, count(*) as domains from keys)`;
      const rows = (await this.records.recordsQuery(this.db.with('keys', () => keysQuery) as unknown as QueryCreator<DB>)
        .innerJoin(ids.as('page'), 'page.id', 'leak_records.id')
        .innerJoin(totals.as('totals'), (join) => join.onTrue())
        .select(['totals.total', 'totals.domains'])
        .orderBy('leak_records.created_at', direction)
        .orderBy('leak_records.id', direction)
        .execute()) as Array<RecordRow & { total: number; domains: number }>;
      if (rows.length && Number(rows[0]?.domains) > MAX_MERGED_DOMAINS) return null;
      return { count: rows.length ? Number(rows[0]?.total) : 0, rows };
    }
    const keys = await keysQuery.execute();
    if (keys.length > MAX_MERGED_DOMAINS) return null;
    const count = keys.reduce((sum, k) => sum + Number(k.n), 0);
    const rows: Array<{ id: string; created_at: string }> = [];
    for (const { key } of keys) {
      rows.push(
        ...(await this.db
          .selectFrom('leak_records')
          .select(['id', 'created_at'])
          .where('domain_rev', '=', key)
          .orderBy('created_at', direction)
          .orderBy('id', direction)
          .limit(wanted)
          .execute()),
      );
    }
    const sign = direction === 'asc' ? 1 : -1;
    rows.sort((a, b) => sign * (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { count, ids: rows.slice((page - 1) * pageSize, wanted).map((r) => r.id) };
  }
}
