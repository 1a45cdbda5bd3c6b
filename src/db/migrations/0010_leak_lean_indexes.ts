import { type Kysely, sql } from 'kysely';
import { recreate } from './0009_leak_fts_prefix_index.js';
import { isPostgres } from './dialect.js';

/**
 * Leaner search structures for the leak corpus, which every ingested record pays for:
 *
 * - The exact-match indexes leave out the records that lack their value (`where ... is not null`).
 *   Leaks are sparse: in the bench corpus 60% of records have no username, 70% no IP address, 90%
 *   no phone number, 30% no password. Every search on these columns compares them with a value
 *   (`=`, `in`, a range), which SQLite and PostgreSQL both take as proof that the value is not null,
 *   so the partial index serves it as the whole one did. On 1,000,000 bench records the indexes
 *   shrink by 170 MB and a bulk load rebuilds them in about 3 s less.
 * - SQLite: the full-text index keeps no per-record column sizes (FTS5 `columnsize=0`). Only
 *   ranking (bm25) reads them, and searches are ordered by date. Its build over 1,000,000 records
 *   goes from about 6 to about 4.5 s, and each record inserted outside a bulk load writes one row
 *   fewer.
 *
 * A bulk load in progress (SQLite) has these indexes set aside: their definitions in
 * leak_bulk_loads change instead, and its end builds them the new way.
 */

const SPARSE_INDEXES: ReadonlyArray<{ name: string; column: string; columns: string }> = [
  { name: 'leak_records_email_idx', column: 'email', columns: 'email, created_at, id' },
  { name: 'leak_records_username_idx', column: 'username_lower', columns: 'username_lower, created_at, id' },
  { name: 'leak_records_phone_idx', column: 'phone', columns: 'phone, created_at, id' },
  { name: 'leak_records_domain_rev_idx', column: 'domain_rev', columns: 'domain_rev, created_at, id' },
  { name: 'leak_records_ip_key_idx', column: 'ip_key', columns: 'ip_key, created_at, id' },
  { name: 'leak_records_sha1_idx', column: 'password_sha1', columns: 'password_sha1' },
];

async function redefine(db: Kysely<any>, partial: boolean): Promise<void> {
  const { rows } = await sql<{ dropped_indexes: string }>`select dropped_indexes from leak_bulk_loads`.execute(db);
  const setAside = rows[0] ? (JSON.parse(rows[0].dropped_indexes) as Array<{ type?: string; name: string; sql: string }>) : null;
  for (const { name, column, columns } of SPARSE_INDEXES) {
    const definition = `create index ${name} on leak_records (${columns})${partial ? ` where ${column} is not null` : ''}`;
    const aside = setAside?.find((o) => o.name === name);
    if (aside) {
      aside.sql = definition;
      continue;
    }
    await sql.raw(`drop index if exists ${name}`).execute(db);
    await sql.raw(definition).execute(db);
  }
  if (setAside) await sql`update leak_bulk_loads set dropped_indexes = ${JSON.stringify(setAside)}`.execute(db);
}

/**
 * Sets the indexes up as partial (up) or whole (down), and SQLite's full-text table with these FTS5
 * options. The migrator runs each migration in a transaction on PostgreSQL, not on SQLite.
 */
async function apply(db: Kysely<any>, partial: boolean, ftsOptions: string): Promise<void> {
  if (isPostgres(db)) {
    await redefine(db, partial);
    return;
  }
  await db.transaction().execute((trx) => redefine(trx, partial));
  await recreate(db, ftsOptions);
}

export async function up(db: Kysely<any>): Promise<void> {
  await apply(db, true, ", prefix='3', columnsize=0");
}

export async function down(db: Kysely<any>): Promise<void> {
  await apply(db, false, ", prefix='3'");
}
