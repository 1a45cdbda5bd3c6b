import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { createLeakIndex, dropLeakIndex } from './leak-indexes.js';

/**
 * PostgreSQL: the full-text index on the expression to_tsvector('simple', search_text) instead of
 * a stored tsvector column. The stored column was a quarter of each row (107 bytes on average);
 * a search reads the index, and rechecks a row (computing its vector again) only for a phrase or a
 * lossy bitmap page. Dropping the column frees its space as rows are rewritten (VACUUM FULL
 * leak_records frees it at once). SQLite's full-text index is an FTS5 table: unchanged.
 */
const INDEX = "create index leak_records_search_idx on leak_records using gin (to_tsvector('simple'::regconfig, search_text))";

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await dropLeakIndex(db, 'leak_records_search_idx');
  await sql`alter table leak_records drop column search_vector`.execute(db);
  await sql`set local maintenance_work_mem = '256MB'`.execute(db);
  await createLeakIndex(db, 'leak_records_search_idx', INDEX);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await dropLeakIndex(db, 'leak_records_search_idx');
  await sql`alter table leak_records add column search_vector tsvector generated always as (to_tsvector('simple', search_text)) stored`.execute(db);
  await createLeakIndex(db, 'leak_records_search_idx', 'create index leak_records_search_idx on leak_records using gin (search_vector)');
}
