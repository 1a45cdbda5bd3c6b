import { type Expression, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { TSchema } from 'typebox';
import type { Dialect } from './database.js';

/**
 * The SQL side of every list: a resource's list is declared once (ListSpec); http/list-query.ts
 * turns a request's query string into ListParams (validated, every error a 400 there), and this
 * file turns ListParams into SQL and runs the count and the page. Nothing here throws for input.
 */

export const MAX_PAGE_SIZE = 500;
export const DEFAULT_PAGE_SIZE = 50;

type AnyQuery = SelectQueryBuilder<any, any, any>;
export type Column = string | RawBuilder<unknown>;

/** What a filter's SQL may depend on besides its value. */
export interface ListContext {
  dialect: Dialect;
  /** PostgreSQL leak search: full text checked in each row read instead of through its index (see pgFullText). */
  fullTextScan?: boolean;
}

/** A custom filter: `parse` (HTTP: validate and normalise, may throw 400) feeds `where` (SQL). */
export interface CustomFilter<T = any> {
  kind: 'custom';
  /** The query parameter's schema (validation and OpenAPI). */
  schema: TSchema;
  /** The parameter's value as the list's SQL takes it; `query` is the whole query, `caller` the user id. */
  parse?: (value: unknown, query: Readonly<Record<string, unknown>>, caller: string | undefined) => T;
  where: (qb: AnyQuery, value: T, ctx: ListContext) => AnyQuery;
}

export type FilterSpec =
  | { kind: 'enum'; column: Column; values: readonly string[]; description: string }
  | { kind: 'uuid'; column: Column; description: string }
  | { kind: 'text'; column: Column; description: string }
  | { kind: 'boolean'; column: Column; description: string }
  | CustomFilter;

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

/** A list request, validated: what the SQL of a list is built from (made by http/list-query.ts). */
export interface ListParams {
  page: number;
  pageSize: number;
  ordering: { field: string; desc: boolean };
  /** Each given filter's value: enum -> string[], uuid -> lower-cased, boolean -> boolean, custom -> its parse(). */
  filters: Readonly<Record<string, unknown>>;
  /** The words of `search` (at most 10). */
  search: readonly string[];
  /** created_after/_before, updated_after/_before as ISO UTC timestamps. */
  ranges: Readonly<Partial<Record<'created_after' | 'created_before' | 'updated_after' | 'updated_before', string>>>;
  /** The parameters as given (empty ones left out): for the shapes a service answers from counters. */
  given: Readonly<Record<string, unknown>>;
}

const ref = (c: Column): Expression<unknown> => (typeof c === 'string' ? sql.ref(c) : c);

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

/** A resource's list, declared once: its spec, and the SQL of its filters, search, ordering and paging. */
export class Listing {
  constructor(readonly spec: ListSpec) {}

  /** Filters, search and date ranges: everything but ordering and paging. */
  filter(qb: AnyQuery, params: ListParams, ctx: ListContext): AnyQuery {
    const { spec } = this;
    for (const [name, f] of Object.entries(spec.filters ?? {})) {
      if (!(name in params.filters)) continue;
      const value = params.filters[name];
      switch (f.kind) {
        case 'enum':
          qb = qb.where(ref(f.column), 'in', value as string[]);
          break;
        case 'uuid':
        case 'text':
        case 'boolean':
          qb = qb.where(ref(f.column), '=', value);
          break;
        case 'custom':
          qb = f.where(qb, value, ctx);
          break;
      }
    }
    if (spec.search?.length) {
      const columns = spec.search;
      for (const word of params.search) {
        qb = qb.where((eb) => eb.or(columns.map((c) => eb(containsInsensitive(c, word, ctx.dialect), '=', sql.lit(true)))));
      }
    }
    const range = (column: Column | undefined, after: keyof ListParams['ranges'], before: keyof ListParams['ranges']) => {
      if (!column) return;
      if (params.ranges[after]) qb = qb.where(ref(column), '>=', params.ranges[after]);
      if (params.ranges[before]) qb = qb.where(ref(column), '<', params.ranges[before]);
    };
    range(spec.createdColumn, 'created_after', 'created_before');
    range(spec.updatedColumn, 'updated_after', 'updated_before');
    return qb;
  }

  /** The column `field` orders by (the id when none): what a merge of several lists' pages compares. */
  orderColumn(field: string): Expression<unknown> {
    return ref(this.spec.ordering[field] ?? this.spec.idColumn);
  }

  /** The ordering asked for, with the id as tiebreak so that pages never overlap. */
  order(qb: AnyQuery, params: Pick<ListParams, 'ordering'>): AnyQuery {
    const column = this.spec.ordering[params.ordering.field] ?? this.spec.idColumn;
    const direction = params.ordering.desc ? 'desc' : 'asc';
    return qb.orderBy(ref(column), direction).orderBy(ref(this.spec.idColumn), direction);
  }

  /**
   * Runs the count and the page. `qb` is the filtered query with its selection; the count runs on
   * the same query without selection or ordering, unless `count` answers it: a cheaper exact count
   * (maintained counters), either a function or a query of one row whose column `n` is the count.
   * A query is read with the page, as a column of each row (one round trip instead of two, and
   * both from one snapshot); only an empty page runs it on its own.
   */
  async page<Row, Out>(qb: AnyQuery, params: ListParams, map: (row: Row) => Out, count?: (() => Promise<number>) | AnyQuery): Promise<ListResult<Out>> {
    const { page, pageSize } = params;
    if (count && typeof count !== 'function') {
      const rows = (await this.pageQuery(qb, params, count).execute()) as Array<Row & { [LIST_COUNT]: number | string | null }>;
      const total = rows.length > 0 ? rows[0]?.[LIST_COUNT] : ((await count.executeTakeFirst()) as { n: number | string | null } | undefined)?.n;
      return { count: Number(total ?? 0), page, pageSize, results: rows.map(map) };
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
    const rows = (await this.pageQuery(qb, params).execute()) as Row[];
    return { count: total, page, pageSize, results: rows.map(map) };
  }

  /** The query of one page: ordered, cut to the page, and with `count` (a counter query) as the column LIST_COUNT. */
  pageQuery(qb: AnyQuery, params: Pick<ListParams, 'ordering' | 'page' | 'pageSize'>, count?: AnyQuery): AnyQuery {
    const ordered = this.order(qb, params).limit(params.pageSize).offset((params.page - 1) * params.pageSize);
    return count ? ordered.select(count.as(LIST_COUNT)) : ordered;
  }
}

/** The column a page's rows carry their list's count in, when a counter query gives it (see Listing.page). */
export const LIST_COUNT = 'list_count';

/**
 * A page of a list as a service answers it: what http/ turns into the envelope (see envelope()),
 * which answers 404 invalid_page for a page past the last.
 */
export interface ListResult<T> {
  count: number;
  /** Set by a list that may stop counting (the leak search): false when `count` is a lower bound. */
  countExact?: boolean;
  /** True when `count` is the planner's estimate rather than counted (PostgreSQL full text over many records). */
  countEstimated?: boolean;
  page: number;
  pageSize: number;
  results: T[];
}

/** Whether the list sets no parameter but `allowed` ones: the shapes a service can answer from counters. */
export function onlyParams(params: Pick<ListParams, 'given'>, allowed: ReadonlySet<string>): boolean {
  return Object.keys(params.given).every((k) => allowed.has(k));
}

/** An enum filter's values, or null when the list is not filtered by it. */
export function filterValues(params: Pick<ListParams, 'filters'>, name: string): string[] | null {
  return (params.filters[name] as string[] | undefined) ?? null;
}
