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
 *   node bench/pg-files-floor.mjs MAIN_URL DIR SHARD_URL...   -> the same, and "per_shard"
 * With shard URLs (a corpus over shards, its schema made by a sharded import first): each row goes
 * to the shard its slot names (the layout of a first start, ids in their slots), all shards loaded
 * and then indexed at once, as threatmon's sharded bulk import does.
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
import { copyChunks, RECORD_COLUMNS } from '../dist/modules/leaks/leaks.record-rows.js';
import { idInSlot, initialSlots, recordSlot } from '../dist/db/corpus-slots.js';
import { corpusFiles, corpusSourceName } from './corpus-files.mjs';

const BATCH = 5000;
/** Batches the worker may have sent ahead of the COPY (memory stays flat on any corpus). */
const AHEAD = 8;
/** As threatmon's rebuild: at least this much memory per index build, half each while two build side by side. */
const MAINTENANCE_WORK_MEM_KB = 256 * 1024;

if (isMainThread) {
  const [url, dir, ...shardUrls] = process.argv.slice(2);
  if (!url || !dir) {
    console.error('usage: node bench/pg-files-floor.mjs POSTGRES_URL DIR [SHARD_URL ...]');
    process.exit(2);
  }
  const sources = new pg.Client({ connectionString: url });
  await sources.connect();
  const byName = new Map((await sources.query('select name, id from leak_sources')).rows.map((r) => [r.name, r.id]));
  await sources.end();
  const files = corpusFiles(dir).map((f) => ({ path: path.join(dir, f), sourceId: byName.get(`Bench ${corpusSourceName(f)}`) }));
  if (files.some((f) => !f.sourceId)) throw new Error('import the corpus with bench/import-leaks.mjs first: its sources are missing');
  // Each server written to (the shards, each its slots' rows, or the one server), with two
  // connections: the full-text build runs beside the others.
  const targets = await Promise.all(
    (shardUrls.length ? shardUrls : [url]).map(async (u) => {
      const t = { main: new pg.Client({ connectionString: u }), side: new pg.Client({ connectionString: u }) };
      await t.main.connect();
      await t.side.connect();
      return t;
    }),
  );
  // A shard's indexes are its slot tables' (the same as one server's leak_records), kept on its template.
  const table = shardUrls.length ? 'leak_records_template' : 'leak_records';
  const definitions = (await targets[0].main.query(`select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename = $1 order by indexname`, [table])).rows.map((r) => ({
    name: `${r.indexname}_floor`,
    sql: r.indexdef.replace(/^CREATE (UNIQUE )?INDEX (\S+) ON (\S+\.)?leak_records(_template)? /, (_m, unique) => `CREATE ${unique ?? ''}INDEX ${r.indexname}_floor ON leak_records_floor `),
  }));
  for (const t of targets) {
    await t.main.query('drop table if exists leak_records_floor');
    await t.main.query(`create table leak_records_floor (like ${table} including defaults including generated)`);
  }

  const started = process.hrtime.bigint();
  const worker = new Worker(new URL(import.meta.url), { workerData: { files, at: new Date().toISOString(), shards: shardUrls.length } });
  // The worker's chunks, one stream per server into one COPY each; a chunk is acknowledged once its
  // COPY has room for more (the worker waits past AHEAD unacknowledged chunks).
  const owed = targets.map(() => 0);
  const streams = targets.map(
    (_t, i) =>
      new Readable({
        read() {
          for (; owed[i] > 0; owed[i]--) worker.postMessage('ack');
        },
      }),
  );
  worker.on('message', (message) => {
    if (message === 'done') return streams.forEach((s) => s.push(null));
    const [i, chunk] = message;
    if (streams[i].push(chunk)) worker.postMessage('ack');
    else owed[i]++;
  });
  worker.on('error', (err) => streams.forEach((s) => s.destroy(err)));
  const copies = targets.map((t) => t.main.query(copyFrom(`copy leak_records_floor (${RECORD_COLUMNS.join(', ')}) from stdin`)));
  const loaded = await Promise.all(
    copies.map(async (copy, i) => {
      await pipeline(streams[i], copy);
      return { rows: Number(copy.rowCount), seconds: Number(process.hrtime.bigint() - started) / 1e9 };
    }),
  );
  await worker.terminate();
  const rows = loaded.reduce((n, l) => n + l.rows, 0);
  const loadSeconds = Number(process.hrtime.bigint() - started) / 1e9;

  // The indexes, as threatmon's rebuild runs them: the full-text (GIN) build on a connection of its
  // own beside the others, each side with half the memory and no parallel workers while both run;
  // every server at once.
  const fullText = definitions.filter((d) => /\busing gin\b/i.test(d.sql));
  const rest = definitions.filter((d) => !fullText.includes(d));
  const indexStarted = process.hrtime.bigint();
  await Promise.all(
    targets.map((t) => {
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
      return Promise.all([build(t.side, fullText), build(t.main, rest)]);
    }),
  );
  const indexSeconds = Number(process.hrtime.bigint() - indexStarted) / 1e9;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  for (const t of targets) {
    await t.main.query('drop table leak_records_floor');
    await t.main.end();
    await t.side.end();
  }
  const perShard = shardUrls.length ? { per_shard: loaded.map((l) => ({ rows: l.rows, load_rows_per_sec: Math.round(l.rows / loadSeconds) })) } : {};
  console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), load_seconds: Number(loadSeconds.toFixed(1)), index_seconds: Number(indexSeconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds), ...perShard }));
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
  // One batch per server (per shard: its slots' records, ids in their slots as threatmon writes them).
  const targets = Math.max(1, workerData.shards);
  const positionOf = new Map(initialSlots(targets).flatMap((slots, i) => slots.map((s) => [s, i])));
  const batches = Array.from({ length: targets }, () => ({ records: [], ids: [], keys: [] }));
  let sourceId = '';
  const send = async (i) => {
    const b = batches[i];
    if (!b.records.length) return;
    while (ahead >= AHEAD) await new Promise((r) => (wake = r));
    ahead++;
    parentPort.postMessage([i, Buffer.concat([...copyChunks(b.records, b.ids, b.keys, sourceId, at)])]);
    batches[i] = { records: [], ids: [], keys: [] };
  };
  const sendAll = async () => {
    for (let i = 0; i < targets; i++) await send(i);
  };
  for (const file of files) {
    await sendAll();
    sourceId = file.sourceId;
    let stream = fs.createReadStream(file.path);
    if (file.path.endsWith('.gz')) stream = stream.pipe(zlib.createGunzip());
    // Decoded as a whole: a character split between two chunks is joined, not garbled.
    stream.setEncoding('utf8');
    let rest = '';
    const take = (line) => {
      if (!line) return -1;
      const result = normaliseRecord(JSON.parse(line));
      if (!result.ok) return -1;
      const key = recordKey(sourceId, result.record.fingerprint);
      if (!fresh(key)) return -1;
      const slot = workerData.shards ? recordSlot(result.record, key) : null;
      const i = slot === null ? 0 : positionOf.get(slot);
      const b = batches[i];
      b.records.push(result.record);
      b.ids.push(slot === null ? uuidv7() : idInSlot(uuidv7(), slot));
      b.keys.push(key);
      return i;
    };
    for await (const chunk of stream) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        const i = take(line);
        if (i >= 0 && batches[i].records.length >= BATCH) await send(i);
      }
    }
    take(rest);
  }
  await sendAll();
  parentPort.postMessage('done');
}
