import { type SelectQueryBuilder, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { type TObject, Type } from 'typebox';
import { Listing, type ListParams } from '../../db/listing.js';
import { normaliseDomain, normaliseEmail } from '../../domain/ioc.js';
import { DATA_CLASSES, domainKeyRange, type FullTextTerm, ftsQuery, ipKeyRange, normalisePhone, parseFullText, SEVERITIES, tsQueryIndexed, wordPatterns } from '../../domain/leak-record.js';
import { AppError } from '../../http/errors.js';
import { badQuery, given, listQuerystring, parseList, toTimestamp } from '../../http/list-query.js';
import { SOURCE_KINDS } from './leaks.schemas.js';

/** The leaks module's lists: the search of the corpus, its sources and saved searches. */

/**
 * PostgreSQL full text: the index's expression matched by every word, each phrase checked in the
 * words' text (tsQueryIndexed). `scan`: every term checked in the words' text alone, for a plan
 * that reads a slice of the corpus rather than the index (LeakSearches.pageFromSlice).
 */
function pgFullText<QB extends SelectQueryBuilder<DB, 'leak_records', unknown>>(qb: QB, terms: FullTextTerm[], scan: boolean): QB {
  const inText = (out: QB, checked: FullTextTerm[]) => wordPatterns(checked).reduce((q, p) => q.where(sql<boolean>`' ' || leak_records.search_text || ' ' like ${p}`) as QB, out);
  // Row by row, each term's words found anywhere first (no text built): most rows stop there.
  const anywhere = (out: QB) => terms.reduce((q, t) => q.where(sql<boolean>`strpos(leak_records.search_text, ${t.words.join(' ')}) > 0`) as QB, out);
  if (scan) return inText(anywhere(qb), terms);
  const { query, phrases } = tsQueryIndexed(terms);
  return inText(qb.where(sql<boolean>`to_tsvector('simple', leak_records.search_text) @@ to_tsquery('simple', ${query})`) as QB, phrases);
}

const str = (description: string, maxLength = 500) => ({ type: 'string', maxLength, description }) as never;

/**
 * The reversed-domain keys a `domain` search covers: `from` alone with exact_domain, else
 * "com.example." up to "com.example/" ('/' follows '.'), the domain and all its subdomains.
 */
export interface DomainRange {
  from: string;
  end: string | null;
}

export function domainRange(value: unknown, query: Readonly<Record<string, unknown>>): DomainRange {
  const n = normaliseDomain(String(value).replace(/\[\.\]/g, '.'));
  if (!n.ok) throw badQuery('domain', n.error);
  const { from, below } = domainKeyRange(n.value);
  const exact = query.exact_domain === true || query.exact_domain === 'true';
  return { from, end: exact ? null : below };
}

/** The criteria of /leaks/search/ (and of saved searches), each with its index-friendly condition. */
export const leakSearch = new Listing({
  filters: {
    q: {
      kind: 'custom',
      schema: str('Full text over every text field: words are AND-ed, `"a phrase"` matches words in order, `prefix*` matches the start of a word. A word is a run of letters or of digits, in the records as in `q`: `harris6915` is the phrase harris 6915, and `harri*` finds harris6915. Records loaded by a bulk load (`import-leaks --bulk`, SQLite) are found by full text once the load has finished; every other criterion finds them at once.'),
      parse: (value): FullTextTerm[] => {
        const terms = parseFullText(String(value));
        if (terms.length === 0) throw badQuery('q', 'needs at least one word');
        return terms;
      },
      // The search spells prefixes out before the SQL is built (LeakSearches.expandPrefixes).
      where: (qb, terms: FullTextTerm[], ctx) =>
        ctx.dialect === 'postgres'
          ? pgFullText(qb, terms, ctx.fullTextScan === true)
          : qb.where(sql<boolean>`leak_records.rowid in (select rowid from leak_records_fts where leak_records_fts match ${ftsQuery(terms)})`),
    },
    email: {
      kind: 'custom',
      schema: str('Exact e-mail address (case-insensitive, defanged forms accepted).', 320),
      parse: (value) => {
        const n = normaliseEmail(String(value).replace(/\[@\]/g, '@').replace(/\[\.\]/g, '.'));
        if (!n.ok) throw badQuery('email', 'must be an e-mail address');
        return n.value;
      },
      where: (qb, email: string) => qb.where('leak_records.email', '=', email),
    },
    domain: {
      kind: 'custom',
      schema: str('Domain: records of it and of its subdomains (unless exact_domain=true), by e-mail domain or domain field.', 253),
      parse: (value, query) => domainRange(value, query),
      where: (qb, range: DomainRange) =>
        range.end === null
          ? qb.where('leak_records.domain_rev', '=', range.from)
          : qb.where('leak_records.domain_rev', '>=', range.from).where('leak_records.domain_rev', '<', range.end),
    },
    exact_domain: { kind: 'custom', schema: Type.Boolean({ description: 'With domain: only that exact domain, no subdomains.' }) as never, where: (qb) => qb },
    exact_count: {
      kind: 'custom',
      schema: Type.Boolean({ description: 'Count every match, however many: without it the count stops at 10,000 (or at the page\'s end) and count_exact says so. A common word of a corpus of millions takes seconds to count.' }) as never,
      parse: (value) => value === true || value === 'true',
      where: (qb) => qb,
    },
    username: {
      kind: 'custom',
      schema: str('Exact username, case-insensitive.', 256),
      parse: (value) => String(value).trim().toLowerCase(),
      where: (qb, username: string) => qb.where('leak_records.username_lower', '=', username),
    },
    ip: {
      kind: 'custom',
      schema: str('An IP address, or a CIDR range such as 203.0.113.0/24.', 64),
      // One address is its key, a range a pair: a statement compiled once per shape (ShapeCache)
      // tells them apart by that, and keeps `=` for an address.
      parse: (value): string | [string, string] => {
        const range = ipKeyRange(String(value).trim().replace(/\[\.\]/g, '.'));
        if (!range) throw badQuery('ip', 'must be an IP address or CIDR range');
        return range[0] === range[1] ? range[0] : range;
      },
      where: (qb, key: string | [string, string]) =>
        typeof key === 'string'
          ? qb.where('leak_records.ip_key', '=', key)
          : qb.where('leak_records.ip_key', '>=', key[0]).where('leak_records.ip_key', '<=', key[1]),
    },
    phone: {
      kind: 'custom',
      schema: str('Phone number; punctuation and a leading + are ignored.', 40),
      parse: (value) => {
        const n = normalisePhone(String(value));
        if (!n) throw badQuery('phone', 'must be a phone number of 6 to 20 digits');
        // With or without the international '+': the same number.
        const digits = n.replace(/^\+/, '');
        return [digits, `+${digits}`];
      },
      where: (qb, numbers: string[]) => qb.where('leak_records.phone', 'in', numbers),
    },
    source: { kind: 'uuid', column: 'leak_records.source_id', description: 'Only records of this source.' },
    has_password: {
      kind: 'custom',
      schema: Type.Boolean({ description: 'Only records with (true) or without (false) a leaked password.' }) as never,
      parse: (value) => value === true || value === 'true',
      where: (qb, has: boolean) => qb.where('leak_records.password_sha1', has ? 'is not' : 'is', null),
    },
    severity: { kind: 'enum', column: 'leak_records.severity', values: SEVERITIES, description: 'Only records of these severities (comma list of low, medium, high, critical): what they expose.' },
    leaked_after: {
      kind: 'custom',
      schema: Type.String({ format: 'date-or-date-time', description: 'Only records leaked at or after this date or time.' }) as never,
      parse: (value) => toTimestamp(String(value), 'leaked_after'),
      where: (qb, at: string) => qb.where('leak_records.leaked_at', '>=', at),
    },
    leaked_before: {
      kind: 'custom',
      schema: Type.String({ format: 'date-or-date-time', description: 'Only records leaked before this date or time.' }) as never,
      parse: (value) => toTimestamp(String(value), 'leaked_before'),
      where: (qb, at: string) => qb.where('leak_records.leaked_at', '<', at),
    },
  },
  ordering: { leaked_at: 'leak_records.leaked_at', created_at: 'leak_records.created_at' },
  idColumn: 'leak_records.id',
  createdColumn: 'leak_records.created_at',
});

export const CRITERIA = ['q', 'email', 'domain', 'username', 'ip', 'phone', 'source'] as const;

/** A /leaks/search/ query (or a saved search's), checked: at least one criterion, each valid. */
export function parseLeakSearch(query: Readonly<Record<string, unknown>>): ListParams {
  if (!CRITERIA.some((c) => given(query[c]))) {
    const message = `give at least one of ${CRITERIA.join(', ')}`;
    throw new AppError('invalid_query', 400, message, { errors: [{ field: 'q', message }] });
  }
  return parseList(leakSearch, query);
}


/** The saved-search `query`: the same parameters, but unknown keys refused. */
export const SavedQuerySchema: TObject = (() => {
  const { page: _p, page_size: _ps, ...props } = listQuerystring(leakSearch).properties as Record<string, never>;
  return Type.Object(props, { additionalProperties: false, description: 'The /leaks/search/ parameters (without page and page_size).' });
})();

export const sourceListing = new Listing({
  filters: {
    kind: { kind: 'enum', column: 'kind', values: SOURCE_KINDS, description: 'Only sources of these kinds.' },
    is_verified: { kind: 'boolean', column: 'is_verified', description: 'Only verified (true) or unverified (false) sources.' },
    is_fabricated: { kind: 'boolean', column: 'is_fabricated', description: 'Only fabricated (true) or genuine (false) sources.' },
    is_sensitive: { kind: 'boolean', column: 'is_sensitive', description: 'Only sensitive (true) or other (false) sources.' },
    is_spam_list: { kind: 'boolean', column: 'is_spam_list', description: 'Only spam lists (true) or not (false).' },
    data_classes: {
      kind: 'custom',
      schema: { type: 'string', description: `Only sources exposing all these data classes (comma list of ${DATA_CLASSES.join(', ')}).` } as never,
      parse: (value): string[] => {
        const classes = String(value).split(',').map((v) => v.trim()).filter(Boolean);
        if (classes.some((c) => !(DATA_CLASSES as readonly string[]).includes(c))) throw badQuery('data_classes', `must be among ${DATA_CLASSES.join(', ')}`);
        return classes;
      },
      where: (qb, classes: string[]) => classes.reduce((q, c) => q.where('data_classes', 'like', `%"${c}"%`), qb),
    },
  },
  search: ['name', 'description'],
  ordering: { created_at: 'created_at', name: 'name', breach_date: 'breach_date', record_count: 'record_count' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export const savedSearchListing = new Listing({
  search: ['name'],
  ordering: { created_at: 'created_at', name: 'name', last_run_at: 'last_run_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

