/**
 * The floor of a PostgreSQL bulk import, for the whole work, as bench/sqlite-files-floor.mjs is
 * SQLite's: a bare program that reads the same corpus files, normalises and keys each line with
 * threatmon's own normaliseRecord and recordKey and writes it in COPY's text form with threatmon's
 * own copyChunks (so the floor gains whatever they gain), COPYs the rows into a new table with
 * leak_records' columns and no index, then runs leak_records' own CREATE INDEX statements (full
 * text included), the full-text build beside the B-trees on a second connection with the memory
 * threatmon's rebuild gives them. A worker thread reads and encodes while the main thread COPYs.
 * A repeated record (its key seen before) is skipped, as threatmon's ON CONFLICT does, by a compact
 * set of the keys' last 64 bits (the first 32 are the source's) in the worker (at 10M records about 270 MB). No monitors,
 * counters, progress or crash recovery. Timed, then dropped.
 *   node bench/pg-files-floor.mjs POSTGRES_URL DIR   -> {"rows", "seconds", "load_seconds", "index_seconds", "rows_per_sec"}
 * (npm run build first: the worker imports dist/.) Sources are found by name, `Bench <file>`, as
 * bench/import-leaks.mjs named them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { v7 as uuidv7 } from 'uuid';
import { normaliseRecord, recordKey } from '../dist/domain/leak-record.js';
import { copyChunks, RECORD_COLUMNS } from '../dist/modules/leaks/leaks.repository.js';
import { corpusFiles, corpusSourceName } from './corpus-files.mjs';

const BATCH = 5000;
/** Batches the worker may have sent ahead of the COPY (memory stays flat on any corpus). */
const AHEAD = 8;
/** As threatmon's rebuild: at least this much memory per index build, half each while two build side by side. */
const MAINTENANCE_WORK_MEM_KB = 256 * 1024;

if (isMainThread) {
  const [url, dir] = process.argv.slice(2);
  if (!url || !dir) {
    console.error('usage: node bench/pg-files-floor.mjs POSTGRES_URL DIR');
    process.exit(2);
  }
  const main = new pg.Client({ connectionString: url });
  const side = new pg.Client({ connectionString: url });
  await main.connect();
  await side.connect();
  const byName = new Map((await main.query('select name, id from leak_sources')).rows.map((r) => [r.name, r.id]));
  const files = corpusFiles(dir).map((f) => ({ path: path.join(dir, f), sourceId: byName.get(`Bench ${corpusSourceName(f)}`) }));
  if (files.some((f) => !f.sourceId)) throw new Error('import the corpus with bench/import-leaks.mjs first: its sources are missing');
  const definitions = (await main.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = 'leak_records' order by indexname`)).rows.map((r) => ({
    name: `${r.indexname}_floor`,
    sql: r.indexdef.replace(/^CREATE (UNIQUE )?INDEX (\S+) ON (\S+\.)?leak_records /, (_m, unique) => `CREATE ${unique ?? ''}INDEX ${r.indexname}_floor ON leak_records_floor `),
  }));
  await main.query('drop table if exists leak_records_floor');
  await main.query('create table leak_records_floor (like leak_records including defaults including generated)');

  const started = process.hrtime.bigint();
  const worker = new Worker(new URL(import.meta.url), { workerData: { files, at: new Date().toISOString() } });
  // The worker's chunks, as one stream into one COPY; a chunk is acknowledged once the COPY has room
  // for more (the worker waits past AHEAD unacknowledged chunks).
  let owed = 0;
  const chunks = new Readable({
    read() {
      for (; owed > 0; owed--) worker.postMessage('ack');
    },
  });
  worker.on('message', (chunk) => {
    if (chunk === 'done') return chunks.push(null);
    if (chunks.push(chunk)) worker.postMessage('ack');
    else owed++;
  });
  worker.on('error', (err) => chunks.destroy(err));
  const copy = main.query(copyFrom(`copy leak_records_floor (${RECORD_COLUMNS.join(', ')}) from stdin`));
  await pipeline(chunks, copy);
  await worker.terminate();
  const rows = Number(copy.rowCount);
  const loadSeconds = Number(process.hrtime.bigint() - started) / 1e9;

  // The indexes, as threatmon's rebuild runs them: the full-text (GIN) build on a connection of its
  // own beside the others, each side with half the memory and no parallel workers while both run.
  const fullText = definitions.filter((d) => /\busing gin\b/i.test(d.sql));
  const rest = definitions.filter((d) => !fullText.includes(d));
  let beside = fullText.length && rest.length ? 2 : 1;
  const build = async (client, list) => {
    try {
      for (const d of list) {
        const shared = beside > 1;
        await client.query(`set maintenance_work_mem = '${Math.floor(MAINTENANCE_WORK_MEM_KB / (shared ? 2 : 1))}kB'`);
        await client.query(shared ? 'set max_parallel_maintenance_workers = 0' : 'reset max_parallel_maintenance_workers');
        await client.query(d.sql);
      }
    } finally {
      beside--;
    }
  };
  const indexStarted = process.hrtime.bigint();
  await Promise.all([build(side, fullText), build(main, rest)]);
  const indexSeconds = Number(process.hrtime.bigint() - indexStarted) / 1e9;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await main.query('drop table leak_records_floor');
  await main.end();
  await side.end();
  console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), load_seconds: Number(loadSeconds.toFixed(1)), index_seconds: Number(indexSeconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds) }));
} else {
  const { files, at } = workerData;
  // Open addressing over the keys' last 64 bits (two 32-bit halves; 0/0 marks a free slot).
  let slots = 1 << 25;
  let hi = new Uint32Array(slots);
  let lo = new Uint32Array(slots);
  let used = 0;
  const place = (h, l) => {
    let i = (l ^ Math.imul(h, 0x9e3779b1)) & (slots - 1);
    for (; hi[i] !== 0 || lo[i] !== 0; i = (i + 1) & (slots - 1)) if (hi[i] === h && lo[i] === l) return false;
    hi[i] = h;
    lo[i] = l;
    return true;
  };
  /** Whether the key is new (and now seen). */
  const fresh = (key) => {
    const view = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    const h = view.readUInt32BE(8) || 1;
    const l = view.readUInt32BE(12);
    if (!place(h, l)) return false;
    if (++used * 2 > slots) {
      const [oldHi, oldLo] = [hi, lo];
      slots *= 2;
      hi = new Uint32Array(slots);
      lo = new Uint32Array(slots);
      for (let i = 0; i < oldHi.length; i++) if (oldHi[i] !== 0 || oldLo[i] !== 0) place(oldHi[i], oldLo[i]);
    }
    return true;
  };
  let ahead = 0;
  let wake = null;
  parentPort.on('message', () => {
    ahead--;
    wake?.();
  });
  let records = [];
  let ids = [];
  let keys = [];
  let sourceId = '';
  const send = async () => {
    if (!records.length) return;
    while (ahead >= AHEAD) await new Promise((r) => (wake = r));
    ahead++;
    parentPort.postMessage([...copyChunks(records, ids, keys, sourceId, at)].join(''));
    records = [];
    ids = [];
    keys = [];
  };
  for (const file of files) {
    await send();
    sourceId = file.sourceId;
    let stream = fs.createReadStream(file.path);
    if (file.path.endsWith('.gz')) stream = stream.pipe(zlib.createGunzip());
    // Decoded as a whole: a character split between two chunks is joined, not garbled.
    stream.setEncoding('utf8');
    let rest = '';
    const take = (line) => {
      if (!line) return;
      const result = normaliseRecord(JSON.parse(line));
      if (!result.ok) return;
      const key = recordKey(sourceId, result.record.fingerprint);
      if (!fresh(key)) return;
      records.push(result.record);
      ids.push(uuidv7());
      keys.push(key);
    };
    for await (const chunk of stream) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        take(line);
        if (records.length >= BATCH) await send();
      }
    }
    take(rest);
  }
  await send();
  parentPort.postMessage('done');
}
