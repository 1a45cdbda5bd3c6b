import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * SQLite: the full-text index also keeps every word's first three letters (FTS5 `prefix='3'`), so a
 * three-letter prefix search (`jam*`) reads one list instead of merging the lists of every word that
 * starts with it (james, jamie, ...): robins* jam* on 1M records went from 141 to 231 searches a
 * second. Three letters because the shortest useful prefixes match the most words; a longer prefix
 * matches few. It costs the index 25 MB and a bulk load's rebuild 3 s per 1M records. FTS5 fixes
 * its options when the table is created, so the table is created again and rebuilt from the records
 * (a bulk load in progress has its records indexed by this rebuild, so its end must not add them
 * again: its starting point moves past them). The triggers name the table and stay as they are.
 *
 * PostgreSQL: nothing (prefixes are spelled out as words there, see migration 0008).
 */

/** Creates the full-text table again with these extra FTS5 options and indexes every record (migration 0010 does it again). */
export async function recreate(db: Kysely<any>, options: string): Promise<void> {
  // Kysely runs SQLite migrations outside a transaction: this is all or nothing by itself.
  await db.transaction().execute(async (trx) => {
    await sql`drop table leak_records_fts`.execute(trx);
    await sql.raw(`create virtual table leak_records_fts using fts5(search_text, content='leak_records', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'${options})`).execute(trx);
    await sql`insert into leak_records_fts(leak_records_fts) values ('rebuild')`.execute(trx);
    await sql`update leak_bulk_loads set from_rowid = (select coalesce(max(rowid), 0) from leak_records)`.execute(trx);
  });
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await recreate(db, ", prefix='3'");
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) await recreate(db, '');
}
