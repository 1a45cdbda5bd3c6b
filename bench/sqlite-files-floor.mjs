/**
 * The floor of a SQLite bulk import, for the whole work: a bare import of the same corpus files into
 * a new table with the same keys, indexes and full-text index, beside the one threatmon filled.
 * Two threads, as a careful bare implementation would use the two cores: a worker reads each file,
 * parses each line and computes the stored columns with threatmon's own normaliseRecord and
 * recordKey (so the floor gains whatever they gain); the main thread inserts the rows (INSERT OR
 * IGNORE on the key: duplicates skipped) in one transaction per batch, then builds the indexes in one
 * pass each. Ids are UUIDv7, as threatmon's: time-ordered, each new row goes at the primary key's
 * right edge. No monitors, counters, progress or crash recovery. Timed, then dropped.
 *   node bench/sqlite-files-floor.mjs FILE.db DIR   -> {"rows", "seconds", "load_seconds", "rows_per_sec"}
 * (npm run build first: the worker imports dist/.) Sources are found by name, `Bench <file>`, as
 * bench/import-leaks.mjs named them.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { v7 as uuidv7 } from 'uuid';
import { normaliseRecord, recordKey, STORED_FIELDS } from '../dist/domain/leak-record.js';
import { corpusFiles, corpusSourceName } from './corpus-files.mjs';
import { floorTable } from './sqlite-floor-table.mjs';

const COLUMNS = ['id', 'source_id', ...STORED_FIELDS, 'created_at'];
const WRITTEN = 'id source_id email username username_lower domain domain_rev ip ip_key phone full_name password_sha1 password_masked extra leaked_at fingerprint search_text email_domain_rev severity password_ntlm created_at';
if (COLUMNS.join(' ') !== WRITTEN) throw new Error(`the stored fields changed: write the row as ${COLUMNS.join(' ')}`);
const BATCH = 5000;
/** Batches the worker may have sent ahead of the inserts (memory stays flat on any corpus). */
const AHEAD = 8;

if (isMainThread) {
  const [file, dir] = process.argv.slice(2);
  if (!file || !dir) {
    console.error('usage: node bench/sqlite-files-floor.mjs FILE.db DIR');
    process.exit(2);
  }
  const floor = floorTable(file);
  const byName = new Map(floor.db.prepare('select name, id from leak_sources').all().map((r) => [r.name, r.id]));
  const files = corpusFiles(dir).map((f) => ({ path: path.join(dir, f), sourceId: byName.get(`Bench ${corpusSourceName(f)}`) }));
  if (files.some((f) => !f.sourceId)) throw new Error('import the corpus with bench/import-leaks.mjs first: its sources are missing');
  const insert = floor.db.prepare(`insert or ignore into leak_records_floor (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
  const insertBatch = floor.db.transaction((rows) => {
    for (const r of rows) insert.run(r);
  });
  const started = process.hrtime.bigint();
  const worker = new Worker(new URL(import.meta.url), { workerData: { files, at: new Date().toISOString() } });
  await new Promise((resolve, reject) => {
    worker.on('message', (rows) => {
      if (rows === 'done') return resolve();
      insertBatch(rows);
      worker.postMessage('ack');
    });
    worker.on('error', reject);
  });
  await worker.terminate();
  const loadSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  floor.buildIndexes();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rows = floor.finish();
  console.log(JSON.stringify({ rows, seconds: Number(seconds.toFixed(1)), load_seconds: Number(loadSeconds.toFixed(1)), rows_per_sec: Math.round(rows / seconds) }));
} else {
  const { files, at } = workerData;
  let ahead = 0;
  let wake = null;
  parentPort.on('message', () => {
    ahead--;
    wake?.();
  });
  let rows = [];
  const send = async () => {
    while (ahead >= AHEAD) await new Promise((r) => (wake = r));
    ahead++;
    parentPort.postMessage(rows);
    rows = [];
  };
  for (const { path: file, sourceId } of files) {
    let stream = fs.createReadStream(file);
    if (file.endsWith('.gz')) stream = stream.pipe(zlib.createGunzip());
    // Decoded as a whole: a character split between two chunks is joined, not garbled.
    stream.setEncoding('utf8');
    let rest = '';
    const take = (line) => {
      if (!line) return;
      const result = normaliseRecord(JSON.parse(line));
      if (!result.ok) return;
      const r = result.record;
      // COLUMNS' order, written out (WRITTEN, checked against it at the top).
      rows.push([uuidv7(), sourceId, r.email, r.username, r.username_lower, r.domain, r.domain_rev, r.ip, r.ip_key, r.phone, r.full_name, r.password_sha1, r.password_masked, JSON.stringify(r.extra), r.leaked_at, recordKey(sourceId, r.fingerprint), r.search_text, r.email_domain_rev, r.severity, r.password_ntlm, at]);
    };
    for await (const chunk of stream) {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        take(line);
        if (rows.length >= BATCH) await send();
      }
    }
    take(rest);
  }
  if (rows.length) await send();
  parentPort.postMessage('done');
}
