import type { Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import { createLeakIndex, dropLeakIndex } from './leak-indexes.js';

/**
 * PostgreSQL: a BRIN index on leak_records.created_at (a few pages per million records: records
 * are written in created_at order), from which a full-text search matching many records reads
 * only its newest slice (LeakSearches.pageFromSlice). SQLite has no BRIN and no such plan.
 */
const INDEX = 'create index leak_records_created_brin on leak_records using brin (created_at)';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await createLeakIndex(db, 'leak_records_created_brin', INDEX);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) await dropLeakIndex(db, 'leak_records_created_brin');
}
