import { sql } from 'kysely';
import { type TObject, Type } from 'typebox';
import { normaliseDomain, normaliseEmail } from '../../domain/ioc.js';
import { type FullTextTerm, ftsQuery, ipKeyRange, normalisePhone, parseFullText, reverseDomain, tsQuery } from '../../domain/leak-record.js';
import { AppError } from '../../http/errors.js';
import { given, type ListContext, Listing, toTimestamp } from '../../http/listing.js';

const bad = (field: string, message: string) => new AppError('invalid_query', 400, `${field}: ${message}`, { errors: [{ field, message }] });

const str = (description: string, maxLength = 500) => ({ type: 'string', maxLength, description }) as never;

/**
 * The reversed-domain keys a `domain` search covers: `from` alone with exact_domain, else
 * "com.example." up to "com.example/" ('/' follows '.'), the domain and all its subdomains.
 */
export function domainRange(value: unknown, query: Record<string, unknown>): { from: string; end: string | null } {
  const n = normaliseDomain(String(value).replace(/\[\.\]/g, '.'));
  if (!n.ok) throw bad('domain', n.error);
  const from = reverseDomain(n.value);
  const exact = query.exact_domain === true || query.exact_domain === 'true';
  return { from, end: exact ? null : `${from.slice(0, -1)}/` };
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
