import { AppError } from '../../errors.js';
import type { ObjectQuery } from './taxii.repository.js';
import type { CollectionKind } from './taxii.schemas.js';
import { MAX_PAGE, STIX_MEDIA, TAXII_MEDIA } from './taxii.schemas.js';

/** TAXII 2.1's query string and media types, parsed: pure functions of the request's text. */

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

const badQuery = (detail: string) => new AppError('invalid_query', 400, detail);

/** An RFC 3339 timestamp as microseconds since the epoch, rounded down (date_added > t iff its microseconds > this). */
export function timestampUs(value: string, name: string): number {
  const m = RFC3339.exec(value);
  const seconds = m ? Date.parse(`${m[1]}${m[3]!.toUpperCase()}`) : Number.NaN;
  if (!m || Number.isNaN(seconds)) throw badQuery(`${name}: must be an RFC 3339 timestamp, such as 2026-01-31T12:00:00.000000Z.`);
  return seconds * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}

/** A date_added: microseconds since the epoch, written with all six digits. */
export function formatUs(us: number): string {
  return `${new Date(Math.floor(us / 1000)).toISOString().slice(0, -1)}${String(us % 1000).padStart(3, '0')}Z`;
}

/** `next`: where a page ended, opaque to the client. */
export const nextToken = (us: number) => Buffer.from(`a${us}`).toString('base64url');

function fromNext(token: string): number {
  const m = /^a(\d{1,17})$/.exec(Buffer.from(token, 'base64url').toString('latin1'));
  if (!m) throw badQuery('next: not a value this server gave.');
  return Number(m[1]);
}

const list = (v: string | undefined) => (v === undefined ? [] : v.split(',').map((s) => s.trim()).filter(Boolean));

export type TaxiiQuery = Partial<Record<'added_after' | 'limit' | 'next' | 'match[id]' | 'match[type]' | 'match[version]' | 'match[spec_version]', string>>;

/** The filters of objects/, manifest/ and versions/; null when match[spec_version] excludes 2.1 (nothing can match). */
export function objectQuery(collection: CollectionKind, q: TaxiiQuery, options: { versions?: string[]; id?: string } = {}): ObjectQuery | null {
  const specVersions = list(q['match[spec_version]']);
  if (specVersions.length && !specVersions.includes('2.1')) return null;
  const limit = q.limit === undefined ? MAX_PAGE : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1) throw badQuery('limit: must be a positive integer.');
  const after = [q.added_after === undefined ? undefined : timestampUs(q.added_after, 'added_after'), q.next === undefined ? undefined : fromNext(q.next)].filter(
    (v): v is number => v !== undefined,
  );
  const versions = options.versions ?? list(q['match[version]']);
  for (const v of versions) if (v !== 'first' && v !== 'last' && v !== 'all') timestampUs(v, 'match[version]');
  return {
    collection,
    afterUs: after.length ? Math.max(...after) : undefined,
    ids: options.id ? [options.id] : list(q['match[id]']),
    types: list(q['match[type]']),
    // A version is matched as written: STIX timestamps are kept as the objects give them.
    versions,
    limit: Math.min(limit, MAX_PAGE),
  };
}

/**
 * The media type to answer, from Accept: TAXII 2.1's (without a version, the latest: 2.1), or for
 * objects STIX 2.1's; a client that names neither but takes anything (`*\/*`, `application/*`, or
 * no Accept) gets TAXII's. Anything else is 406.
 */
export function negotiate(accept: string | undefined, objects: boolean): string {
  if (!accept) return TAXII_MEDIA;
  let wildcard = false;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const param = (name: string) => params.find((p) => p.startsWith(`${name}=`))?.slice(name.length + 1).replace(/"/g, '');
    if (param('q') !== undefined && Number(param('q')) === 0) continue;
    const version = param('version');
    if (version !== undefined && version !== '2.1') continue;
    if (type === 'application/taxii+json') return TAXII_MEDIA;
    if (objects && type === 'application/stix+json') return STIX_MEDIA;
    if (type === '*/*' || type === 'application/*') wildcard = true;
  }
  if (wildcard) return TAXII_MEDIA;
  throw new AppError('not_acceptable', 406, `This server answers ${TAXII_MEDIA}${objects ? ` (or ${STIX_MEDIA})` : ''}; the Accept header names neither.`);
}
