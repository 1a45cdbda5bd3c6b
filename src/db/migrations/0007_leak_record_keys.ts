import { hash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * Records are unique on one 16-byte key, recordKey(source id, content fingerprint): 4 bytes of the
 * source, 12 of the source and content, instead of on (source id, 64-hex-digit fingerprint). The
 * index that skips duplicates as records arrive shrinks from about 120 to about 25 bytes an entry,
 * so a large load keeps it in cache (on SQLite a bulk load of 1,000,000 records into one source
 * spent a third of its time writing its pages).
 *
 * PostgreSQL changes the column's type in place. SQLite cannot change a constraint, so the table is
 * rebuilt, keeping every rowid (the full-text index refers to records by rowid, and so does a bulk
 * load in progress), then its indexes and triggers are created again as they were.
 */

/**
 * The key as this migration computes it, frozen here (the app's recordKey may change; this may
 * not): 4 bytes of SHA-256 of the source id, then 12 of SHA-256 of the source id, a newline and
 * the fingerprint. SQLite calls it as leak_record_key() (registered on each connection by
 * db/database.ts); PostgreSQL computes the same in SQL above.
 */
export function leakRecordKey(sourceId: string, fingerprint: string): Buffer {
  return Buffer.from(hash('sha256', sourceId, 'hex').slice(0, 8) + hash('sha256', `${sourceId}\n${fingerprint}`, 'hex').slice(0, 24), 'hex');
}

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table leak_records drop constraint leak_records_source_fingerprint_key`.execute(db);
    await sql`alter table leak_records alter column fingerprint type bytea
      using substring(sha256(convert_to(source_id::text, 'UTF8')) from 1 for 4)
         || substring(sha256(convert_to(source_id::text || chr(10) || fingerprint, 'UTF8')) from 1 for 12)`.execute(db);
    await sql`alter table leak_records add constraint leak_records_fingerprint_key unique (fingerprint)`.execute(db);
    return;
  }
  // Kysely runs SQLite migrations outside a transaction: this one is all or nothing by itself.
  await db.transaction().execute(async (trx) => {
    const { rows: kept } = await sql<{ sql: string }>`
      select sql from sqlite_master where tbl_name = 'leak_records' and type in ('index', 'trigger') and sql is not null order by type, name`.execute(trx);
    await sql`create table leak_records_new (
      id text primary key,
      source_id text not null references leak_sources (id) on delete cascade,
      email text, username text, username_lower text, domain text, domain_rev text, ip text, ip_key text,
      phone text, full_name text, password_sha1 text, password_masked text,
      extra text default '{}' not null,
      leaked_at text,
      fingerprint blob not null,
      search_text text default '' not null,
      created_at text not null,
      constraint leak_records_fingerprint_key unique (fingerprint))`.execute(trx);
    // The columns as they are (the new table declares the same ones, in the same order).
    const { rows: columns } = await sql<{ name: string }>`select name from pragma_table_info('leak_records') order by cid`.execute(trx);
    const names = columns.map((c) => c.name);
    const cols = sql.raw(names.join(', '));
    const from = sql.raw(names.map((c) => (c === 'fingerprint' ? 'leak_record_key(source_id, fingerprint)' : c)).join(', '));
    await sql`insert into leak_records_new (rowid, ${cols}) select rowid, ${from} from leak_records order by rowid`.execute(trx);
    await sql`drop table leak_records`.execute(trx);
    await sql`alter table leak_records_new rename to leak_records`.execute(trx);
    for (const { sql: text } of kept) await sql.raw(text).execute(trx);
  });
}

export async function down(): Promise<void> {
  // The content fingerprints cannot be recovered from the keys: records stay keyed the new way.
}
