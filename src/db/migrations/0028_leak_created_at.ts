import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { createLeakIndex, dropLeakIndex } from './leak-indexes.js';

/**
 * An index of leak_records.created_at for the full-text searches that match many records
 * (LeakSearches): on PostgreSQL a BRIN index (a few pages per million records: records are
 * written in created_at order) from which the page is read in the newest slice only; on SQLite a
 * B-tree walked newest first, each record checked against the words' matches, until the page is full.
 */
const PG_INDEX = 'create index leak_records_created_brin on leak_records using brin (created_at)';
const SQLITE_INDEX = 'create index leak_records_created_idx on leak_records (created_at)';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await createLeakIndex(db, 'leak_records_created_brin', PG_INDEX);
  else await createLeakIndex(db, 'leak_records_created_idx', SQLITE_INDEX);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropLeakIndex(db, isPostgres(db) ? 'leak_records_created_brin' : 'leak_records_created_idx');
}
