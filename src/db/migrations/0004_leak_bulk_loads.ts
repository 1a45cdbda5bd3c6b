import { type Kysely, sql } from 'kysely';
import { isPostgres, timestamp } from './dialect.js';

/**
 * Bulk loads of the leak corpus on SQLite (`threatmon import-leaks --bulk`): while a row of
 * leak_bulk_loads exists, the search indexes are dropped (their definitions are kept in the row)
 * and the full-text index is not maintained row by row; finishing the load rebuilds both and
 * deletes the row. The full-text triggers learn to stand aside meanwhile.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('leak_bulk_loads')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    // Records with a greater rowid were loaded without full-text indexing.
    .addColumn('from_rowid', 'bigint', (c) => c.notNull())
    // JSON array of the CREATE INDEX statements of the dropped indexes.
    .addColumn('dropped_indexes', 'text', (c) => c.notNull())
    .addColumn('started_at', timestamp(db), (c) => c.notNull())
    .execute();
  if (isPostgres(db)) return;
  await sql`drop trigger leak_records_fts_insert`.execute(db);
  await sql`drop trigger leak_records_fts_delete`.execute(db);
  await sql`create trigger leak_records_fts_insert after insert on leak_records
    when not exists (select 1 from leak_bulk_loads) begin
      insert into leak_records_fts(rowid, search_text) values (new.rowid, new.search_text); end`.execute(db);
  // A record loaded during a bulk load is not in the full-text index yet: nothing to delete there.
  await sql`create trigger leak_records_fts_delete after delete on leak_records
    when not exists (select 1 from leak_bulk_loads where old.rowid > from_rowid) begin
      insert into leak_records_fts(leak_records_fts, rowid, search_text) values ('delete', old.rowid, old.search_text); end`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) {
    await sql`drop trigger leak_records_fts_insert`.execute(db);
    await sql`drop trigger leak_records_fts_delete`.execute(db);
    await sql`create trigger leak_records_fts_insert after insert on leak_records begin
      insert into leak_records_fts(rowid, search_text) values (new.rowid, new.search_text); end`.execute(db);
    await sql`create trigger leak_records_fts_delete after delete on leak_records begin
      insert into leak_records_fts(leak_records_fts, rowid, search_text) values ('delete', old.rowid, old.search_text); end`.execute(db);
  }
  await db.schema.dropTable('leak_bulk_loads').execute();
}
