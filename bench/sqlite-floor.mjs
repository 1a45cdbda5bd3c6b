/**
 * The floor of a SQLite bulk import, for the database's part alone: the rows threatmon stored,
 * inserted by SQLite itself (one INSERT ... SELECT, no JavaScript per row, no input read) into a new
 * table with the same keys, then the same search indexes and full-text index built in one pass each,
 * as a bulk load does. Timed, then dropped. bench/sqlite-files-floor.mjs is the floor of the whole work.
 *   node bench/sqlite-floor.mjs FILE.db   -> {"rows", "seconds", "rows_per_sec"}
 */
import { floorTable } from './sqlite-floor-table.mjs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/sqlite-floor.mjs FILE.db');
  process.exit(2);
}
const floor = floorTable(file);
const started = process.hrtime.bigint();
floor.db.transaction(() => floor.db.exec('insert into leak_records_floor select * from leak_records order by rowid'))();
floor.buildIndexes();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const rows = floor.finish();
console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds) }));
