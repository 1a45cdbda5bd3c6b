import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import { directReader } from './database.js';
import type { DB } from './schema.js';

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
  let compiled: { query: CompiledQuery<Row>; slots: Array<number | undefined> } | undefined;
  return async (db: Kysely<DB>, ...args: Args): Promise<Row[]> => {
    if (!compiled) {
      const marks = args.map((_, i) => `\u0000prepared-argument-${i}\u0000`);
      const query = build(db, ...(marks as Args)).compile();
      const slots = query.parameters.map((p) => (typeof p === 'string' ? marks.indexOf(p) : -1)).map((i) => (i >= 0 ? i : undefined));
      const used = new Set(slots.filter((s) => s !== undefined));
      if (used.size !== args.length) throw new Error(`prepared query: ${args.length - used.size} argument(s) not bound as plain values in ${query.sql}`);
      compiled = { query, slots };
    }
    const { query, slots } = compiled;
    const parameters = query.parameters.map((p, i) => (slots[i] === undefined ? p : args[slots[i] as number]));
    const direct = directReader(db)?.(query.sql, parameters);
    if (direct) return direct as Row[];
    return (await db.executeQuery<Row>(CompiledQuery.raw(query.sql, parameters))).rows;
  };
}
