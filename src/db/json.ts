import { type RawBuilder, sql } from 'kysely';

/**
 * A PostgreSQL timestamp column as toISOString() writes it (MS truncates, as pgTimestampToIso does),
 * for rows the database writes as JSON text. SQLite keeps timestamps as that text already.
 */
export const pgIso = (column: string): RawBuilder<string> => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
