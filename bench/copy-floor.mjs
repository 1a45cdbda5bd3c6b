/**
 * The floor of a PostgreSQL bulk import: a bare COPY of the rows threatmon stored into a new table
 * with the same columns and indexes (CREATE TABLE ... LIKE leak_records INCLUDING ALL), timed, then
 * dropped. The rows are first copied out of leak_records into a file (not timed).
 *   node bench/copy-floor.mjs POSTGRES_URL [ROWS_FILE]   -> {"rows", "seconds", "rows_per_sec"}
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

const url = process.argv[2];
if (!url) {
  console.error('usage: node bench/copy-floor.mjs POSTGRES_URL [ROWS_FILE]');
  process.exit(2);
}
const file = process.argv[3] ?? path.join(os.tmpdir(), `threatmon-floor-${process.pid}.copy`);
const client = new pg.Client({ connectionString: url });
await client.connect();
const { rows: cols } = await client.query(
  `select string_agg(quote_ident(attname), ', ' order by attnum) as list from pg_attribute
    where attrelid = 'leak_records'::regclass and attnum > 0 and not attisdropped and attgenerated = ''`,
);
const columns = cols[0].list;
await pipeline(client.query(copyTo(`copy (select ${columns} from leak_records) to stdout`)), fs.createWriteStream(file));
await client.query('drop table if exists leak_records_floor');
await client.query('create table leak_records_floor (like leak_records including all)');
const started = process.hrtime.bigint();
const copy = client.query(copyFrom(`copy leak_records_floor (${columns}) from stdin`));
await pipeline(fs.createReadStream(file, { highWaterMark: 1 << 20 }), copy);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const rows = copy.rowCount;
await client.query('drop table leak_records_floor');
await client.end();
if (!process.argv[3]) fs.rmSync(file, { force: true });
console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds) }));
