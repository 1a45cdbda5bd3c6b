import { type TObject, type TProperties, Type } from 'typebox';
import { DEFAULT_PAGE_SIZE, type Listing, type ListParams, MAX_PAGE_SIZE } from '../db/listing.js';
import { AppError } from '../errors.js';
import { isUuid } from './schemas.js';

/**
 * The HTTP side of every list: the query-string schema a list route declares (validation and
 * OpenAPI), and the one parser that turns a query into ListParams. Every 400 `invalid_query` and
 * the 404 of a page no list can hold are thrown here; db/listing.ts builds the SQL.
 */

/** No list holds this many pages of one record: a page past it is past the last, whatever the count. */
export const MAX_PAGE = 1_000_000_000;

export const invalidPage = () => new AppError('invalid_page', 404, 'Invalid page.');

/** A 400 invalid_query naming the parameter. */
export function badQuery(field: string, message: string): AppError {
  return new AppError('invalid_query', 400, `${field}: ${message}`, { errors: [{ field, message }] });
}

/** Whether a query parameter was given a value (an empty one counts as absent). */
export const given = (value: unknown) => value !== undefined && value !== '';

/** Accepts a date (`2026-01-31`, midnight UTC) or a full ISO 8601 timestamp; returns ISO UTC. `field` names it in the error. */
export function toTimestamp(value: string, field: string): string {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime())) throw badQuery(field, `"${value}" is not an ISO 8601 date`);
  return d.toISOString();
}

const orderings = (listing: Listing) => Object.keys(listing.spec.ordering).flatMap((f) => [f, `-${f}`]);
const schemas = new WeakMap<Listing, TObject>();

/** The query-string schema of a list (made once per list). */
export function listQuerystring(listing: Listing): TObject {
  let schema = schemas.get(listing);
  if (schema) return schema;
  const { spec } = listing;
  const props: TProperties = {
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1. A page past the last answers 404 invalid_page.' })),
    page_size: Type.Optional(
      Type.Integer({ minimum: 1, description: `Records per page, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); larger values are clamped to ${MAX_PAGE_SIZE}.` }),
    ),
    ordering: Type.Optional(
      Type.Enum(orderings(listing), {
        type: 'string',
        description: `Sort field, \`-\` for descending (default \`${spec.defaultOrdering ?? '-created_at'}\`); ties are broken by id so pages never overlap.`,
      }),
    ),
  };
  if (spec.search?.length) {
    props.search = Type.Optional(Type.String({ maxLength: 200, description: 'Free text: every word must appear (case-insensitive) in one of the searched fields.' }));
  }
  const dateDoc = (what: string) => Type.Optional(Type.String({ format: 'date-or-date-time', description: what }));
  if (spec.createdColumn) {
    props.created_after = dateDoc('Only records created at or after this ISO 8601 date or timestamp.');
    props.created_before = dateDoc('Only records created before this ISO 8601 date or timestamp.');
  }
  if (spec.updatedColumn) {
    props.updated_after = dateDoc('Only records updated at or after this time (incremental sync).');
    props.updated_before = dateDoc('Only records updated before this time.');
  }
  for (const [name, f] of Object.entries(spec.filters ?? {})) {
    switch (f.kind) {
      case 'enum':
        props[name] = Type.Optional(Type.String({ description: `${f.description} One or more of ${f.values.join(', ')}, comma-separated (OR).` }));
        break;
      case 'uuid':
        props[name] = Type.Optional(Type.String({ format: 'uuid', description: f.description }));
        break;
      case 'text':
        props[name] = Type.Optional(Type.String({ maxLength: 500, description: f.description }));
        break;
      case 'boolean':
        props[name] = Type.Optional(Type.Boolean({ description: f.description }));
        break;
      case 'custom':
        props[name] = Type.Optional(f.schema);
        break;
    }
  }
  schema = Type.Object(props);
  schemas.set(listing, schema);
  return schema;
}

/**
 * The page and its size, bounded before any arithmetic: a page number too large for any list is
 * 404 invalid_page at once (its offset would pass what the databases take, 2^63).
 */
export function pageParams(query: { page?: unknown; page_size?: unknown }) {
  const page = Number(query.page ?? 1);
  if (page > MAX_PAGE) throw invalidPage();
  const pageSize = Math.min(Number(query.page_size ?? DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  return { page, pageSize };
}

/**
 * A list request's query, checked against its list: each filter's value parsed, the search cut
 * into words, dates made timestamps, the ordering one of the list's. `caller` is the user asking
 * (for filters such as `assignee=me`).
 */
export function parseList(listing: Listing, query: Readonly<Record<string, unknown>>, caller?: { user: { id: string } }): ListParams {
  const { spec } = listing;
  const givenParams: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) if (given(v)) givenParams[k] = v;
  const filters: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(spec.filters ?? {})) {
    const value = query[name];
    if (!given(value)) continue;
    switch (f.kind) {
      case 'enum': {
        const values = String(value)
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean);
        const bad = values.find((v) => !f.values.includes(v));
        if (bad !== undefined || values.length === 0) throw badQuery(name, `must be one of ${f.values.join(', ')}`);
        filters[name] = values;
        break;
      }
      case 'uuid':
        if (!isUuid(String(value))) throw badQuery(name, 'must be a valid uuid');
        filters[name] = String(value).toLowerCase();
        break;
      case 'text':
        filters[name] = String(value);
        break;
      case 'boolean':
        filters[name] = value === true || value === 'true';
        break;
      case 'custom':
        filters[name] = f.parse ? f.parse(value, query, caller?.user.id) : value;
        break;
    }
  }
  const search = spec.search?.length && typeof query.search === 'string' ? query.search.trim().split(/\s+/).filter(Boolean).slice(0, 10) : [];
  const ranges: Record<string, string> = {};
  const range = (present: unknown, after: string, before: string) => {
    if (!present) return;
    for (const key of [after, before]) if (given(query[key])) ranges[key] = toTimestamp(String(query[key]), key);
  };
  range(spec.createdColumn, 'created_after', 'created_before');
  range(spec.updatedColumn, 'updated_after', 'updated_before');
  const wanted = String(query.ordering ?? spec.defaultOrdering ?? '-created_at');
  if (!orderings(listing).includes(wanted)) throw badQuery('ordering', `must be one of ${orderings(listing).join(', ')}`);
  const desc = wanted.startsWith('-');
  return { ...pageParams(query), ordering: { field: desc ? wanted.slice(1) : wanted, desc }, filters, search, ranges, given: givenParams };
}
