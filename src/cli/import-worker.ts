import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { type RecordResult, recordKey } from '../domain/leak-record.js';
import { NdjsonLines, recordResult } from '../modules/leaks/ndjson-lines.js';
import { type ImportFormat, readItems } from './import-items.js';

/**
 * The import's second core: reads, parses and normalises a file, handing batches of results to
 * the main thread, which only writes them. At most MAX_IN_FLIGHT batches wait: memory stays flat.
 * Twenty lets this thread prepare the whole of the next 10,000-record bulk batch while the main
 * thread writes one, and be ahead still when it is done: with eight, each thread waited on the
 * other for a fifth of a bulk load of the bench corpus (20 s of one core per 1,000,000 records).
 * The peak RSS of that load with the CLI's heap limits stays near 230 MB.
 *
 * The thread reads one file per `read` job and then waits for the next: an import of several files
 * in one process reuses it, compiled code and all (a new thread spent its first 20,000 records
 * at about 24 us each instead of 15 us, before the compiler had caught up).
 */
const MAX_IN_FLIGHT = 20;
const BATCH = 1000;

export interface ReadJob {
  type: 'read';
  file: string;
  format: ImportFormat;
  sourceId: string;
}

const port = parentPort as NonNullable<typeof parentPort>;
let inFlight = 0;
let resume: (() => void) | null = null;
port.on('message', (m: 'ack' | ReadJob) => {
  if (m === 'ack') {
    inFlight--;
    resume?.();
    resume = null;
    return;
  }
  void read(m);
});

async function read({ file, format, sourceId }: ReadJob) {
  inFlight = 0;
  let batch: Array<{ index: number; result: RecordResult }> = [];
  let index = 0;
  const send = async (bytesRead: number) => {
    while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((r) => (resume = r));
    inFlight++;
    port.postMessage({ type: 'batch', items: batch, bytesRead });
    batch = [];
  };
  /** Adds one parsed value; true when the batch is full. */
  const add = (value: unknown): boolean => {
    const result = recordResult(value);
    // The stored key too (two hashes): this thread has the time, the writer does not.
    if (result.ok) result.record.key = recordKey(sourceId, result.record.fingerprint).toString('hex');
    batch.push({ index: index++, result });
    return batch.length >= BATCH;
  };
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
}
