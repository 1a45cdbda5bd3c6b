import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { Separator } from '../domain/dump-lines.js';
import { type RecordResult, recordKeyHex } from '../domain/leak-record.js';
import { Utf8Lines } from '../domain/text-lines.js';
import { ExpansionLimit, type ExpansionLimits, IMPORT_FORMATS, type ImportFormat, inputMembers, openInput, type ReadPosition, UnknownLineFormat } from '../modules/leaks/index.js';
import { BatchBuilder, type MakeRows } from './reader-batch.js';

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
/** The reader says where it stands in the file each time it has read this much more of it. */
const POSITION_STEP = 1024 * 1024;

export interface ReadJob {
  type: 'read';
  file: string;
  /** Given (--format), else detected per member from its content. */
  format?: ImportFormat;
  /** The separator of a combolist or stealer log (--separator), else detected. */
  separator?: Separator;
  /** The columns of a headerless CSV or TSV (--columns). */
  columns?: readonly string[];
  /** Where each rejected line goes, as NDJSON (--rejects). */
  rejects?: string;
  sourceId: string;
  /** How far a compressed member may expand (--max-expansion-ratio, --max-expanded-size). */
  expansion?: ExpansionLimits;
  /** PostgreSQL: the batches' records made into COPY rows here (see LeaksService.rowsMadeByReader). */
  makeRows?: MakeRows;
}

/** What the reader tells the writer besides batches. */
export type ReaderMessage =
  | { type: 'member'; name: string; format: ImportFormat; separator?: Separator }
  | { type: 'position'; bytes: number }
  | { type: 'done'; reasons: Array<[string, number]>; windows1252Lines: number; cut: Array<[string, string]> }
  | { type: 'error'; message: string; items: number };

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

async function read(job: ReadJob) {
  inFlight.length = 0;
  waitingBytes = 0;
  const batch = new BatchBuilder(0, job.makeRows);
  const send = async () => {
    while (inFlight.length > 0 && (inFlight.length >= MAX_IN_FLIGHT || waitingBytes + batch.inputBytes > MAX_IN_FLIGHT_BYTES)) await new Promise<void>((r) => (resume = r));
    inFlight.push(batch.inputBytes);
    waitingBytes += batch.inputBytes;
    const taken = batch.take();
    // The rows' bytes are handed over, not copied.
    port.postMessage(taken, taken.encoded ? [taken.encoded.rows.copy.buffer as ArrayBuffer] : []);
  };
  const rejects = job.rejects ? fs.createWriteStream(job.rejects) : null;
  /** Why items were rejected, and how often: the summary names the commonest. */
  const reasons = new Map<string, number>();
  /** Lines read as Windows-1252, over every member. */
  let windows1252Lines = 0;
  /** Items read so far, sent or not: where an error stopped the file. */
  let items = 0;
  let member = '';
  /** Adds one item read from `bytes` of input (its line number for line formats); true when the batch is full. */
  const add = (result: RecordResult, bytes: number, line?: number, text?: string): boolean => {
    items++;
    if (!result.ok) {
      const reason = result.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      rejects?.write(`${JSON.stringify({ file: member, ...(line === undefined ? { index: batch.start + batch.count } : { line }), reason, ...(text === undefined ? {} : { text }) })}\n`);
    }
    // The stored key too (two hashes), written straight into the batch as bytes: the writer binds
    // it as it is.
    batch.add(result, bytes, result.ok ? recordKeyHex(job.sourceId, result.record.fingerprint) : undefined, line);
    return batch.full(BATCH, BATCH_BYTES);
  };
  /** Members ended early by the expansion limits: the others are still read. */
  const cut: Array<[string, string]> = [];
  const position: ReadPosition = { bytes: 0 };
  let posted = 0;
  let itemsThen = 0;
  /**
   * The member's chunks, telling the writer where the reading stands when it has read POSITION_STEP
   * of the file without an item (one endless line, a compressed run of zeros): its bar moves with the
   * items stored otherwise.
   */
  async function* reporting(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const c of chunks) {
      yield c;
      if (items !== itemsThen) {
        itemsThen = items;
        posted = position.bytes;
      } else if (position.bytes - posted >= POSITION_STEP) {
        posted = position.bytes;
        port.postMessage({ type: 'position', bytes: posted } satisfies ReaderMessage);
      }
    }
  }
  let last: ReaderMessage;
  try {
    for await (const input of inputMembers(job.file, position, job.expansion)) {
      member = input.name;
      // Each member decoded on its own: one ended early leaves no begun line to the next.
      const encoding = new Utf8Lines();
      let numbered = false;
      const told = (t: { format: string; separator?: Separator; numbered: boolean }) => {
        numbered = t.numbered;
        port.postMessage({ type: 'member', name: input.name, format: t.format, ...(t.separator ? { separator: t.separator } : {}) } satisfies ReaderMessage);
      };
      try {
        for await (const read of openInput(reporting(input.chunks), { format: job.format, separator: job.separator, columns: job.columns, encoding, told })) {
          for (const it of read) if (add(it.result, it.bytes, numbered ? it.index : undefined, it.text)) await send();
        }
      } catch (err) {
        if (err instanceof UnknownLineFormat) throw new Error(`cannot tell the format of ${input.name} from its content: pass --format ${IMPORT_FORMATS.join('|')}`);
        if (!(err instanceof ExpansionLimit)) throw err;
        cut.push([input.name, err.message]);
      } finally {
        windows1252Lines += encoding.windows1252Lines;
      }
    }
    if (batch.count) await send();
    last = { type: 'done', reasons: [...reasons], windows1252Lines, cut };
  } catch (err) {
    // What was read before the failure goes to the writer first, which stores it (see ingest()).
    if (batch.count) await send();
    last = { type: 'error', message: err instanceof Error ? err.message : String(err), items };
  }
  // The rejects file is whole before the import is told the reading ended: it may be read at once.
  await new Promise((resolve) => (rejects ? rejects.end(resolve) : resolve(undefined)));
  port.postMessage(last satisfies ReaderMessage);
}
