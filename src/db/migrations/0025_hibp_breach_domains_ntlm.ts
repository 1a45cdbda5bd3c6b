import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { createLeakIndex, dropLeakIndex } from './leak-indexes.js';

/**
 * What the Have I Been Pwned surface needs: each leak source's `domain` (the breached site, a
 * Breach's Domain), and each record's NTLM hash of its password (upper-case hex, for the NTLM
 * range), computed at ingest from a plaintext password. Passwords are never stored, so records
 * ingested before this have none. A bulk load in progress (SQLite) gets the index when it ends.
 */
const INDEX = 'create index leak_records_ntlm_idx on leak_records (password_ntlm) where password_ntlm is not null';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema.alterTable('leak_sources').addColumn('domain', 'text').execute();
  await db.schema
    .alterTable('leak_records')
    .addColumn('password_ntlm', pg ? sql`text collate "C"` : sql`text`)
    .execute();
  await createLeakIndex(db, 'leak_records_ntlm_idx', INDEX);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropLeakIndex(db, 'leak_records_ntlm_idx');
  await db.schema.alterTable('leak_records').dropColumn('password_ntlm').execute();
  await db.schema.alterTable('leak_sources').dropColumn('domain').execute();
}
