import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { RecordResult } from '../domain/leak-record.js';
import { recordResult } from '../modules/leaks/ndjson.js';
import { type ImportFormat, readItems } from './import-items.js';

/**
 * The import's second core: reads, parses and normalises the file, handing batches of results to
 * the main thread, which only writes them. At most MAX_IN_FLIGHT batches wait: memory stays flat.
 * Eight lets this thread prepare most of a 10,000-record bulk batch while the main thread writes
 * the previous one (four left both threads waiting on each other a quarter of the time).
 */
const MAX_IN_FLIGHT = 8;
const BATCH = 1000;

const { file, format } = workerData as { file: string; format: ImportFormat };
const port = parentPort as NonNullable<typeof parentPort>;
let inFlight = 0;
let resume: (() => void) | null = null;
port.on('message', () => {
  inFlight--;
  resume?.();
  resume = null;
});

async function send(items: Array<{ index: number; result: RecordResult }>, bytesRead: number) {
  while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (resume = r));
  inFlight++;
  port.postMessage({ type: 'batch', items, bytesRead });
}

try {
  const stream = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
  let batch: Array<{ index: number; result: RecordResult }> = [];
  for await (const { index, value } of readItems(stream, format)) {
    batch.push({ index, result: recordResult(value) });
    if (batch.length >= BATCH) {
      await send(batch, stream.bytesRead);
      batch = [];
    }
  }
  if (batch.length) await send(batch, stream.bytesRead);
  port.postMessage({ type: 'done' });
} catch (err) {
  port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
}
