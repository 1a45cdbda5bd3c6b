import { type Kysely, sql } from 'kysely';

/** PostgreSQL: leak_records' foreign keys as the catalog has them, and whether each is validated (a bulk load sets them aside). */
export async function leakRecordForeignKeys(db: Kysely<any>): Promise<Array<{ name: string; valid: boolean }>> {
  return (await sql<{ name: string; valid: boolean }>`select conname as name, convalidated as valid from pg_constraint where conrelid = 'leak_records'::regclass and contype = 'f'`.execute(db)).rows;
}

/**
 * PostgreSQL: the corpus's tables (leak_records, or a shard's slot tables) whose autovacuum is off,
 * as a bulk load leaves them until it ends.
 */
export const AUTOVACUUM_OFF = `select relname as name from pg_class where relname ~ '^leak_records(_s[0-9a-f])?$' and relkind = 'r'
  and 'autovacuum_enabled=false' = any(reloptions) and relnamespace = current_schema()::regnamespace order by 1`;

export async function corpusAutovacuumOff(db: Kysely<any>): Promise<string[]> {
  return (await sql.raw<{ name: string }>(AUTOVACUUM_OFF).execute(db)).rows.map((r) => r.name);
}
