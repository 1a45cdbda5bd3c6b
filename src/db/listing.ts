import { type Expression, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { type TObject, type TProperties, type TSchema, Type } from 'typebox';
import { AppError } from '../errors.js';
import type { Dialect } from './database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: string) => UUID.test(value);

export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

type AnyQuery = SelectQueryBuilder<any, any, any>;
type Column = string | RawBuilder<unknown>;

export interface ListContext {
  dialect: Dialect;
  /** The caller, for filters such as `assignee=me`. */
  userId?: string;
  /** The whole query, for filters that depend on another parameter. */
  query?: ListQuery;
}

export type FilterSpec =
  | { kind: 'enum'; column: Column; values: readonly string[]; description: string }
  | { kind: 'uuid'; column: Column; description: string }
  | { kind: 'text'; column: Column; description: string }
  | { kind: 'boolean'; column: Column; description: string }
  | {
      kind: 'custom';
      schema: TSchema;
      apply: (qb: AnyQuery, value: unknown, ctx: ListContext) => AnyQuery;
    };

export interface ListSpec {
  /** Query parameter -> how it filters. */
  filters?: Record<string, FilterSpec>;
  /** Columns that `search=` looks in (case-insensitive substring, every word must match). */
  search?: Column[];
  /** Orderable field -> its column or expression. */
  ordering: Record<string, Column>;
  defaultOrdering?: string;
  /** Column of the tiebreak that keeps pages stable. */
  idColumn: Column;
  createdColumn?: Column;
  updatedColumn?: Column;
}

export interface ListQuery {
  page?: number;
  page_size?: number;
  ordering?: string;
  search?: string;
  [key: string]: unknown;
}

const ref = (c: Column): Expression<unknown> => (typeof c === 'string' ? sql.ref(c) : c);

function invalidQuery(field: string, message: string): AppError {
  return new AppError('invalid_query', 400, `${field}: ${message}`, { errors: [{ field, message }] });
}

export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Case-insensitive substring match on both dialects. */
export function containsInsensitive(column: Column, term: string, dialect: Dialect) {
  const pattern = `%${escapeLike(term.toLowerCase())}%`;
  return dialect === 'postgres'
    ? sql<boolean>`${ref(column)} ilike ${pattern} escape '\\'`
    : sql<boolean>`lower(${ref(column)}) like ${pattern} escape '\\'`;
}

/**
 * A resource's list behaviour, declared once: it yields the query-string schema (validation and
 * OpenAPI) and applies filters, search, ordering and pagination to a Kysely query.
 */
export class Listing {
  readonly querystring: TObject;
  private readonly orderings: string[];

  constructor(private readonly spec: ListSpec) {
    const props: TProperties = {
      page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, from 1. A page past the last answers 404 invalid_page.' })),
      page_size: Type.Optional(
        Type.Integer({ minimum: 1, description: `Records per page, 1-${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); larger values are clamped to ${MAX_PAGE_SIZE}.` }),
      ),
    };
    this.orderings = Object.keys(spec.ordering).flatMap((f) => [f, `-${f}`]);
    props.ordering = Type.Optional(
      Type.Enum(this.orderings, {
        type: 'string',
        description: `Sort field, \`-\` for descending (default \`${spec.defaultOrdering ?? '-created_at'}\`); ties are broken by id so pages never overlap.`,
      }),
    );
    if (spec.search?.length) {
      props.search = Type.Optional(
        Type.String({ maxLength: 200, description: 'Free text: every word must appear (case-insensitive) in one of the searched fields.' }),
      );
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
    this.querystring = Type.Object(props);
  }

  /** Filters, search and date ranges: everything but ordering and paging. */
  filter(qb: AnyQuery, query: ListQuery, ctx: ListContext): AnyQuery {
    const { spec } = this;
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
          if (bad !== undefined || values.length === 0) throw invalidQuery(name, `must be one of ${f.values.join(', ')}`);
          qb = qb.where(ref(f.column), 'in', values);
          break;
        }
        case 'uuid':
          if (!isUuid(String(value))) throw invalidQuery(name, 'must be a valid uuid');
          qb = qb.where(ref(f.column), '=', String(value).toLowerCase());
          break;
        case 'text':
          qb = qb.where(ref(f.column), '=', String(value));
          break;
        case 'boolean':
          qb = qb.where(ref(f.column), '=', Boolean(value));
          break;
        case 'custom':
          qb = f.apply(qb, value, { ...ctx, query });
          break;
      }
    }
    if (spec.search?.length && typeof query.search === 'string' && query.search.trim()) {
      const columns = spec.search;
      for (const word of query.search.trim().split(/\s+/).slice(0, 10)) {
        qb = qb.where((eb) => eb.or(columns.map((c) => eb(containsInsensitive(c, word, ctx.dialect), '=', sql.lit(true)))));
      }
    }
    const range = (column: Column | undefined, after: string, before: string) => {
      if (!column) return;
      if (query[after]) qb = qb.where(ref(column), '>=', toTimestamp(String(query[after]), after));
      if (query[before]) qb = qb.where(ref(column), '<', toTimestamp(String(query[before]), before));
    };
    range(spec.createdColumn, 'created_after', 'created_before');
    range(spec.updatedColumn, 'updated_after', 'updated_before');
    return qb;
  }

  order(qb: AnyQuery, query: ListQuery): AnyQuery {
    const wanted = query.ordering ?? this.spec.defaultOrdering ?? '-created_at';
    if (!this.orderings.includes(wanted)) throw invalidQuery('ordering', `must be one of ${this.orderings.join(', ')}`);
    const desc = wanted.startsWith('-');
    const column = this.spec.ordering[desc ? wanted.slice(1) : wanted];
    if (column === undefined) throw invalidQuery('ordering', `must be one of ${this.orderings.join(', ')}`);
    const direction = desc ? 'desc' : 'asc';
    return qb.orderBy(ref(column), direction).orderBy(ref(this.spec.idColumn), direction);
  }

  /**
   * Runs the count and the page. `qb` is the filtered query with its selection; the count runs on
   * the same query without selection or ordering, unless `count` answers it: a cheaper exact count
   * (maintained counters), either a function or a query of one row whose column `n` is the count.
   * A query is read with the page, as a column of each row (one round trip instead of two, and
   * both from one snapshot); only an empty page runs it on its own.
   */
  async page<Row, Out>(qb: AnyQuery, query: ListQuery, map: (row: Row) => Out, count?: (() => Promise<number>) | AnyQuery): Promise<ListResult<Out>> {
    const { page, pageSize } = pageParams(query);
    if (count && typeof count !== 'function') {
      const rows = (await this.pageQuery(qb, query, count).execute()) as Array<Row & { [LIST_COUNT]: number | string | null }>;
      const total = rows.length > 0 ? rows[0]?.[LIST_COUNT] : ((await count.executeTakeFirst()) as { n: number | string | null } | undefined)?.n;
      return listResult(Number(total ?? 0), page, pageSize, rows.map(map));
    }
    let total: number;
    if (count) {
      total = await count();
    } else {
      const countRow = (await qb
        .clearSelect()
        .clearOrderBy()
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirst()) as { count: number | string } | undefined;
      total = Number(countRow?.count ?? 0);
    }
    const rows = (await this.pageQuery(qb, query).execute()) as Row[];
    return listResult(total, page, pageSize, rows.map(map));
  }

  /** The query of one page: ordered, cut to the page, and with `count` (a counter query) as the column LIST_COUNT. */
  pageQuery(qb: AnyQuery, query: ListQuery, count?: AnyQuery): AnyQuery {
    const { page, pageSize } = pageParams(query);
    const ordered = this.order(qb, query).limit(pageSize).offset((page - 1) * pageSize);
    return count ? ordered.select(count.as(LIST_COUNT)) : ordered;
  }
}

/** The column a page's rows carry their list's count in, when a counter query gives it (see Listing.page). */
export const LIST_COUNT = 'list_count';

/** A page of a list as a service answers it: what http/ turns into the envelope (see envelope()). */
export interface ListResult<T> {
  count: number;
  page: number;
  pageSize: number;
  results: T[];
}

/** A page of `count` records; a page past the last is 404 invalid_page (page 1 of nothing is fine). */
export function listResult<T>(count: number, page: number, pageSize: number, results: T[]): ListResult<T> {
  if (page > Math.max(1, Math.ceil(count / pageSize))) throw invalidPage();
  return { count, page, pageSize, results };
}

/** Whether a query parameter was given a value (an empty one counts as absent). */
export const given = (value: unknown) => value !== undefined && value !== '';

/** A comma-separated parameter's values (trimmed, empty ones left out), or null when it is not given. */
export function listValues(value: unknown): string[] | null {
  return given(value) ? String(value).split(',').map((s) => s.trim()).filter(Boolean) : null;
}

/** Whether the query sets no parameter but `allowed` ones: the shapes a service can answer from counters. */
export function onlyParams(query: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  return Object.keys(query).every((k) => allowed.has(k) || !given(query[k]));
}

/** No list holds this many pages of one record: a page past it is past the last, whatever the count. */
export const MAX_PAGE = 1_000_000_000;

/**
 * The page and its size, bounded before any arithmetic: a page number too large for any list is
 * 404 invalid_page at once (its offset would pass what the databases take, 2^63).
 */
export function pageParams(query: { page?: number; page_size?: number }) {
  const page = query.page ?? 1;
  if (page > MAX_PAGE) throw invalidPage();
  const pageSize = Math.min(query.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  return { page, pageSize };
}

export const invalidPage = () => new AppError('invalid_page', 404, 'Invalid page.');

/** Accepts a date (`2026-01-31`, midnight UTC) or a full ISO 8601 timestamp; returns ISO UTC. `field` names it in the error. */
export function toTimestamp(value: string, field: string): string {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(d.getTime())) throw invalidQuery(field, `"${value}" is not an ISO 8601 date`);
  return d.toISOString();
}
