import { type Kysely, sql } from 'kysely';

/** PostgreSQL: leak_records' foreign keys as the catalog has them, and whether each is validated (a bulk load sets them aside). */
export async function leakRecordForeignKeys(db: Kysely<any>): Promise<Array<{ name: string; valid: boolean }>> {
  return (await sql<{ name: string; valid: boolean }>`select conname as name, convalidated as valid from pg_constraint where conrelid = 'leak_records'::regclass and contype = 'f'`.execute(db)).rows;
}
