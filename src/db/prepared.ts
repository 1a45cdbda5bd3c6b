import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { directReader } from './database.js';
import type { DB } from './schema.js';

/**
 * A compiled query whose arguments were placeholders (`marks`): its SQL, and for each parameter
 * the index of the argument it takes (undefined: a constant of the query, kept).
 */
interface Template<Row> {
  query: CompiledQuery<Row>;
  slots: Array<number | undefined>;
}

/** The placeholder of argument `i`: a string no input holds (NUL is refused in every field). */
const mark = (i: number) => `\u0000placeholder-${i}\u0000`;

/**
 * `build` compiled once with placeholders for its arguments. Null when a placeholder did not reach
 * the parameters as it is (transformed, or written into the SQL text): that query cannot be reused.
 */
function template<Row>(compilable: Compilable<Row>, count: number): Template<Row> | null {
  const query = compilable.compile();
  const marks = Array.from({ length: count }, (_, i) => mark(i));
  const slots = query.parameters.map((p) => {
    const i = typeof p === 'string' ? marks.indexOf(p) : -1;
    return i >= 0 ? i : undefined;
  });
  const used = new Set(slots.filter((s) => s !== undefined));
  const leaked = query.sql.includes('\u0000') || query.parameters.some((p, i) => slots[i] === undefined && typeof p === 'string' && p.includes('\u0000'));
  return used.size === count && !leaked ? { query, slots } : null;
}

/** Runs a template with its arguments bound (on SQLite outside a transaction, at once: directReader). */
async function runTemplate<Row>(db: Kysely<DB>, { query, slots }: Template<Row>, args: readonly unknown[]): Promise<Row[]> {
  const parameters = query.parameters.map((p, i) => (slots[i] === undefined ? p : args[slots[i] as number]));
  const direct = directReader(db)?.(query.sql, parameters);
  if (direct) return direct as Row[];
  return (await db.executeQuery<Row>(CompiledQuery.raw(query.sql, parameters))).rows;
}

/**
 * A query whose shape never changes, built and compiled once (on its first run) instead of on
 * every call: later calls only bind their arguments. For the queries of every request (a
 * resource by id): Kysely's building and compiling were a tenth of a single GET's time.
 *
 * On SQLite, a reading query outside any transaction runs at once on the connection (directReader).
 *
 * `build` receives placeholders for its arguments and must use each of them as a plain value
 * (`where(col, '=', arg)`), never in an expression that transforms it; a placeholder that does not
 * reach the compiled parameters as it is throws on the first run.
 */
export function prepared<Args extends unknown[], Row>(build: (db: Kysely<DB>, ...args: Args) => Compilable<Row>) {
  // One SQL text for every call: a prepared query belongs to a repository, which serves one dialect.
  let compiled: Template<Row> | undefined;
  return async (db: Kysely<DB>, ...args: Args): Promise<Row[]> => {
    if (!compiled) {
      const query = build(db, ...(args.map((_, i) => mark(i)) as Args));
      compiled = template(query, args.length) ?? undefined;
      if (!compiled) throw new Error(`prepared query: arguments not bound as plain values in ${query.compile().sql}`);
    }
    return runTemplate(db, compiled, args);
  };
}

/** Shapes kept by a ShapeCache before it forgets them all (a shape is a combination of parameters, not of values). */
const MAX_SHAPES = 500;

/**
 * Queries whose shape follows a request's parameters (which filters, which ordering) but not
 * their values: each shape built and compiled once, then only bound. `values` is walked, each
 * string and number in it replaced by a placeholder; what remains (the structure, nulls,
 * booleans) and `key` name the shape. `build` must use the placeholders as plain values, as
 * prepared()'s do; it may branch on the structure, never on a placeholder's content. A shape whose
 * placeholders do not all reach the parameters as they are is built anew each time.
 */
export class ShapeCache {
  private readonly shapes = new Map<string, Template<unknown> | null>();

  async run<V, Row>(db: Kysely<DB>, key: string, values: V, build: (marked: V) => Compilable<Row>): Promise<Row[]> {
    const args: unknown[] = [];
    const marked = placeholders(values, args) as V;
    const shape = `${key}\n${JSON.stringify(marked)}`;
    let compiled = this.shapes.get(shape) as Template<Row> | null | undefined;
    if (compiled === undefined) {
      if (this.shapes.size >= MAX_SHAPES) this.shapes.clear();
      compiled = template(build(marked), args.length);
      this.shapes.set(shape, compiled);
    }
    // Not reusable: built with the values themselves.
    if (compiled === null) return (await db.executeQuery<Row>(build(values).compile())).rows;
    return runTemplate(db, compiled, args);
  }
}

/** `value` with each string and number replaced by the placeholder of its place in `args` (where it goes). */
function placeholders(value: unknown, args: unknown[]): unknown {
  if (typeof value === 'string' || typeof value === 'number') {
    args.push(value);
    return mark(args.length - 1);
  }
  if (Array.isArray(value)) return value.map((v) => placeholders(v, args));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, placeholders(v, args)]));
  return value;
}
