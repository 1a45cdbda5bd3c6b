import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { type RecordResult, recordKey } from '../domain/leak-record.js';
import { NdjsonLines, recordResult } from '../modules/leaks/ndjson-lines.js';
import { type ImportFormat, readItems } from './import-items.js';

/**
 * The import's second core: reads, parses and normalises the file, handing batches of results to
 * the main thread, which only writes them. At most MAX_IN_FLIGHT batches wait: memory stays flat.
 * Eight lets this thread prepare most of a 10,000-record bulk batch while the main thread writes
 * the previous one (four left both threads waiting on each other a quarter of the time).
 */
const MAX_IN_FLIGHT = 8;
const BATCH = 1000;

const { file, format, sourceId } = workerData as { file: string; format: ImportFormat; sourceId: string };
const port = parentPort as NonNullable<typeof parentPort>;
let inFlight = 0;
let resume: (() => void) | null = null;
port.on('message', () => {
  inFlight--;
  resume?.();
  resume = null;
});

let batch: Array<{ index: number; result: RecordResult }> = [];
let index = 0;

async function send(bytesRead: number) {
  while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (resume = r));
  inFlight++;
  port.postMessage({ type: 'batch', items: batch, bytesRead });
  batch = [];
}

/** Adds one parsed value; true when the batch is full. */
function add(value: unknown): boolean {
  const result = recordResult(value);
  // The stored key too (two hashes): this thread has the time, the writer does not.
  if (result.ok) result.record.key = recordKey(sourceId, result.record.fingerprint).toString('hex');
  batch.push({ index: index++, result });
  return batch.length >= BATCH;
}

try {
  const stream = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
  if (format === 'ndjson') {
    // A chunk's lines are split and normalised in one synchronous pass: no promise per record.
    const lines = new NdjsonLines();
    for await (const chunk of stream) {
      for (const value of lines.push(chunk as Buffer)) if (add(value)) await send(stream.bytesRead);
    }
    for (const value of lines.end()) add(value);
  } else {
    for await (const { value } of readItems(stream, format)) if (add(value)) await send(stream.bytesRead);
  }
  if (batch.length) await send(stream.bytesRead);
  port.postMessage({ type: 'done' });
} catch (err) {
  port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
}
