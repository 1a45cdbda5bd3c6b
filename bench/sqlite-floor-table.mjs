/**
 * The table a SQLite floor fills (bench/sqlite-floor.mjs, bench/sqlite-files-floor.mjs): a copy of
 * leak_records' definition and indexes under other names, in the database threatmon imported into.
 */
import Database from 'better-sqlite3';

/** Opens `file` as a bulk writer would, and creates the empty floor table beside leak_records. */
export function floorTable(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -65536');
  db.pragma('threads = 2');
  const objects = db.prepare("select type, name, sql from sqlite_master where tbl_name = 'leak_records' and sql is not null and type in ('table', 'index')").all();
  const table = objects.find((o) => o.type === 'table');
  const indexes = objects.filter((o) => o.type === 'index');
  const rename = (sql) => sql.replace(/\b(leak_records_\w+_idx)\b/g, 'floor_$1').replace(/\bleak_records\b/g, 'leak_records_floor');
  db.exec('drop table if exists leak_records_floor; drop table if exists leak_records_floor_fts');
  db.exec(rename(table.sql));
  const fts = db.prepare("select sql from sqlite_master where name = 'leak_records_fts'").get().sql;
  return {
    db,
    /** The same search indexes and full-text index, built in one pass each, as a bulk load does. */
    buildIndexes() {
      for (const i of indexes) db.exec(rename(i.sql));
      db.exec(fts.replace(/\bleak_records_fts\b/, 'leak_records_floor_fts').replace(/content\s*=\s*'?leak_records'?/, "content='leak_records_floor'"));
      db.transaction(() => db.exec('insert into leak_records_floor_fts (rowid, search_text) select rowid, search_text from leak_records_floor'))();
    },
    /** The rows in it, then the table dropped and the file given its space back to the WAL's end. */
    finish() {
      const rows = db.prepare('select count(*) as n from leak_records_floor').get().n;
      db.exec('drop table leak_records_floor_fts; drop table leak_records_floor');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      return rows;
    },
  };
}
