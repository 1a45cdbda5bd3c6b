/**
 * The floor of a SQLite bulk import: the rows threatmon stored, inserted by SQLite itself (one
 * INSERT ... SELECT, no JavaScript per row) into a new table with the same keys, then the same
 * search indexes and full-text index built in one pass each, as a bulk load does. Timed, then dropped.
 *   node bench/sqlite-floor.mjs FILE.db   -> {"rows", "seconds", "rows_per_sec"}
 */
import Database from 'better-sqlite3';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/sqlite-floor.mjs FILE.db');
  process.exit(2);
}
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
const started = process.hrtime.bigint();
db.transaction(() => db.exec('insert into leak_records_floor select * from leak_records order by rowid'))();
for (const i of indexes) db.exec(rename(i.sql));
db.exec(fts.replace(/\bleak_records_fts\b/, 'leak_records_floor_fts').replace(/content\s*=\s*'?leak_records'?/, "content='leak_records_floor'"));
db.transaction(() => db.exec('insert into leak_records_floor_fts (rowid, search_text) select rowid, search_text from leak_records_floor'))();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const rows = db.prepare('select count(*) as n from leak_records_floor').get().n;
db.exec('drop table leak_records_floor_fts; drop table leak_records_floor');
db.pragma('wal_checkpoint(TRUNCATE)');
db.close();
console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds) }));
