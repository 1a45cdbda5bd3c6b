import { type RawBuilder, sql } from 'kysely';

/**
 * A PostgreSQL timestamp column as toISOString() writes it (MS truncates, as pgTimestampToIso does),
 * for rows the database writes as JSON text. SQLite keeps timestamps as that text already.
 */
export const pgIso = (column: string): RawBuilder<string> => sql.raw(pgIsoText(column));
export const pgIsoText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A SQL value as JSON text: a JSON string (or number) for a value, `null` for NULL. */
export const jsonQuote = (dialect: 'sqlite' | 'postgres', value: RawBuilder<unknown>): RawBuilder<string> =>
  dialect === 'sqlite' ? sql<string>`json_quote(${value})` : sql<string>`coalesce(to_json(${value})::text, 'null')`;

/** One field of a row written as JSON text by jsonObjectText (columns are trusted SQL, never input). */
export type JsonField =
  /** A text column (or uuid, or an expression of them), as a JSON string or null; `optional`: the key is left out when null. */
  | { key: string; text: string; optional?: boolean }
  /** A column whose text never needs escaping (a uuid, or a word of a fixed set): quoted as it is, or null; cheaper than `text`. */
  | { key: string; plain: string }
  /** A timestamp column, as toISOString() writes it, or null. */
  | { key: string; time: string }
  /** A number column, or a column holding JSON text: spliced as it is (never null). */
  | { key: string; raw: string }
  /** JSON text the caller builds (never null); with `when`, the key is left out where that column is null. */
  | { key: string; expr: RawBuilder<string>; when?: string };

/**
 * A row as the JSON text of an object with these keys in this order, built by concatenation so
 * that a key can be left out per row (json_object and json_build_object always write every key;
 * jsonb would reorder them).
 */
export function jsonObjectText(dialect: 'sqlite' | 'postgres', fields: readonly JsonField[]): RawBuilder<string> {
  const parts = fields.map((f, i) => {
    const name = sql.raw(`'${i === 0 ? '{' : ','}"${f.key}":'`);
    if ('raw' in f) return sql`${name} || ${sql.raw(f.raw)}`;
    if ('expr' in f) return f.when ? sql`(case when ${sql.raw(f.when)} is null then '' else ${name} || ${f.expr} end)` : sql`${name} || ${f.expr}`;
    // A timestamp's ISO text needs no escaping either.
    if ('plain' in f || 'time' in f) {
      const column = 'plain' in f ? f.plain : dialect === 'postgres' ? pgIsoText(f.time) : f.time;
      return sql`${name} || coalesce('"' || ${sql.raw(column)} || '"', 'null')`;
    }
    const value = jsonQuote(dialect, sql.raw(f.text));
    return 'text' in f && f.optional ? sql`(case when ${sql.raw(f.text)} is null then '' else ${name} || ${value} end)` : sql`${name} || ${value}`;
  });
  return sql<string>`(${sql.join(parts, sql` || `)} || '}')`;
}
