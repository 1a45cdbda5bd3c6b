import { type RawBuilder, sql } from 'kysely';

/**
 * A PostgreSQL timestamp column as toISOString() writes it (MS truncates, as pgTimestampToIso does),
 * for rows the database writes as JSON text. SQLite keeps timestamps as that text already.
 */
export const pgIso = (column: string): RawBuilder<string> => sql.raw(pgIsoText(column));
const pgIsoText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One field of a row written as JSON text by jsonObjectText (columns are trusted SQL, never input). */
export type JsonField =
  /** A text column (or uuid), as a JSON string or null; `optional`: the key is left out when null. */
  | { key: string; text: string; optional?: boolean }
  /** A timestamp column, as toISOString() writes it, or null. */
  | { key: string; time: string }
  /** A number column, or a column holding JSON text: spliced as it is (never null). */
  | { key: string; raw: string }
  /** A JSON value the caller builds (never null); with `when`, the key is left out where that column is null. */
  | { key: string; expr: RawBuilder<string>; when?: string };

/**
 * A row as the JSON text of an object with these keys in this order, built by concatenation so
 * that a key can be left out per row (json_object and json_build_object always write every key;
 * jsonb would reorder them).
 */
export function jsonObjectText(dialect: 'sqlite' | 'postgres', fields: readonly JsonField[]): RawBuilder<string> {
  const quote = (e: string) => (dialect === 'sqlite' ? `json_quote(${e})` : `coalesce(to_json(${e})::text, 'null')`);
  const parts: RawBuilder<unknown>[] = [];
  fields.forEach((f, i) => {
    const name = `'${i === 0 ? '{' : ','}"${f.key}":'`;
    if ('text' in f) {
      parts.push(sql.raw(f.optional ? `(case when ${f.text} is null then '' else ${name} || ${quote(f.text)} end)` : `${name} || ${quote(f.text)}`));
    } else if ('time' in f) {
      parts.push(sql.raw(`${name} || ${quote(dialect === 'sqlite' ? f.time : pgIsoText(f.time))}`));
    } else if ('raw' in f) {
      parts.push(sql.raw(`${name} || ${f.raw}`));
    } else {
      parts.push(f.when ? sql`(case when ${sql.raw(f.when)} is null then '' else ${sql.raw(name)} || ${f.expr} end)` : sql`${sql.raw(name)} || ${f.expr}`);
    }
  });
  return sql<string>`(${sql.join(parts, sql` || `)} || '}')`;
}
