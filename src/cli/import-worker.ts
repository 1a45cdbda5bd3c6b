import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { recordKeyHex } from '../domain/leak-record.js';
import { NdjsonLines, recordResult } from '../modules/leaks/index.js';
import { type ImportFormat, readItems } from './import-items.js';
import { BatchBuilder } from './reader-batch.js';

/**
 * The import's second core: reads, parses and normalises a file, handing batches of results to
 * the main thread, which only writes them. At most MAX_IN_FLIGHT batches wait, so memory stays flat;
 * twenty let this thread prepare the whole of the next 10,000-record bulk batch while the main
 * thread writes one (with fewer, each thread waited on the other).
 *
 * The thread reads one file per `read` job and then waits for the next: an import of several files
 * in one process reuses it, its code already compiled.
 */
const MAX_IN_FLIGHT = 20;
const BATCH = 1000;
/**
 * Bytes of input the batches waiting may have been read from, and that one batch may hold: with
 * large records (100 KB of `extra`), counting records alone would let gigabytes wait. Ordinary
 * records (under 1 KB) never reach these.
 */
const MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024;
const BATCH_BYTES = 1024 * 1024;

export interface ReadJob {
  type: 'read';
  file: string;
  format: ImportFormat;
  sourceId: string;
}

const port = parentPort as NonNullable<typeof parentPort>;
/** The input bytes of each batch sent and not yet acknowledged, oldest first (its length: the batches waiting). */
const inFlight: number[] = [];
/** Their sum. */
let waitingBytes = 0;
let resume: (() => void) | null = null;
port.on('message', (m: 'ack' | ReadJob) => {
  if (m === 'ack') {
    waitingBytes -= inFlight.shift() ?? 0;
    resume?.();
    resume = null;
    return;
  }
  void read(m);
});

async function read({ file, format, sourceId }: ReadJob) {
  inFlight.length = 0;
  waitingBytes = 0;
  const batch = new BatchBuilder();
  const send = async () => {
    while (inFlight.length > 0 && (inFlight.length >= MAX_IN_FLIGHT || waitingBytes + batch.inputBytes > MAX_IN_FLIGHT_BYTES)) await new Promise<void>((r) => (resume = r));
    inFlight.push(batch.inputBytes);
    waitingBytes += batch.inputBytes;
    port.postMessage(batch.take());
  };
  /** Items read so far, sent or not: where an error stopped the file. */
  let items = 0;
  /** Adds one parsed value read from `bytes` of input; true when the batch is full. */
  const add = (value: unknown, bytes: number): boolean => {
    items++;
    const result = recordResult(value);
    // The stored key too (two hashes), written straight into the batch as bytes: the writer binds
    // it as it is.
    batch.add(result, bytes, result.ok ? recordKeyHex(sourceId, result.record.fingerprint) : undefined);
    return batch.count >= BATCH || batch.inputBytes >= BATCH_BYTES;
  };
  try {
    const stream = fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
    if (format === 'ndjson') {
      // A chunk's lines are split and normalised in one synchronous pass: no promise per record.
      const lines = new NdjsonLines();
      const sizes: number[] = [];
      for await (const chunk of stream) {
        sizes.length = 0;
        const values = lines.push(chunk as Buffer, sizes);
        for (let i = 0; i < values.length; i++) if (add(values[i], sizes[i] as number)) await send();
      }
      sizes.length = 0;
      const last = lines.end(sizes);
      if (last.length) add(last[0], sizes[0] as number);
    } else {
      // CSV and JSON arrays: the bytes read since the previous item are this item's.
      let counted = 0;
      for await (const { value } of readItems(stream, format)) {
        const bytes = stream.bytesRead - counted;
        counted = stream.bytesRead;
        if (add(value, bytes)) await send();
      }
    }
    if (batch.count) await send();
    port.postMessage({ type: 'done' });
  } catch (err) {
    // What was read before the failure goes to the writer first, which stores it (see ingest()).
    if (batch.count) await send();
    port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err), items });
  }
}
