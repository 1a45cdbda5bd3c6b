import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { SingleBar } from 'cli-progress';
import type { Separator } from '../domain/dump-lines.js';
import { BATCH_SIZE, type ExpansionLimits, formatNamed, type ImportFormat, IngestCutOff, type IngestItem, type IngestReport, type LeaksService, type SourceKind } from '../modules/leaks/index.js';
import type { ReaderMessage, ReadJob } from './import-worker.js';
import { type ReaderBatch, readerItems } from './reader-batch.js';

export type { ImportFormat } from '../modules/leaks/index.js';

export class ImportError extends Error {}


export interface ImportOptions {
  file: string;
  source: string;
  /** Given, else detected from the content of each file (a zip's members each on its own). */
  format?: ImportFormat;
  /** A combolist's or stealer log's separator, else detected. */
  separator?: Separator;
  /** The columns of a headerless CSV or TSV. */
  columns?: readonly string[];
  /** Where rejected lines are written, as NDJSON. */
  rejects?: string;
  /** How far a compressed member may expand before it is ended there (DEFAULT_EXPANSION). */
  expansion?: ExpansionLimits;
  /** What the source is (breach, combolist, stealer_log, paste, other): set on the source, new or not. */
  kind?: SourceKind;
  createSource?: boolean;
  /** Where the progress and summary go (stderr by default). */
  out?: NodeJS.WriteStream;
  progress?: boolean;
  /** Set the search indexes aside while loading and rebuild them at the end (see leaks.bulk-load.ts, leaks.bulk-load-pg.ts). */
  bulk?: boolean;
  /** Run leaks.afterLargeLoad() after a large file (default true; a caller loading many files runs it once at the end). */
  afterLargeLoad?: boolean;
  /**
   * Stops the import (the CLI's Ctrl-C): no more input is read, the records read so far are
   * stored, and a bulk load ends as usual.
   */
  signal?: AbortSignal;
}

export type ImportReport = IngestReport & {
  seconds: number;
  interrupted: boolean;
  /** Each file read (a zip's members), with the format it was read as. */
  members: Array<{ name: string; format: ImportFormat; separator?: Separator }>;
  /** Lines that were not UTF-8, read as Windows-1252. */
  windows1252Lines: number;
  /** The commonest reasons items were rejected, with how many each. */
  topReasons: Array<[string, number]>;
};

/** Records per batch of a bulk load (up to; see LeaksService.ingest). */
const BULK_BATCH_SIZE = 10_000;
/**
 * Records per batch made into COPY rows on the reader thread (PostgreSQL; up to): smaller than the
 * writer's own batches, so that the reader, the writer and the server take turns more finely on
 * the cores they share (docs/SCALING.md has the figures).
 */
const READER_ROWS_BATCH = 2_000;
/**
 * A bulk load keeps its transaction open for more batches for this long: each commit writes every
 * page the transaction touched, and a source's content keys are in random order, so each batch of a
 * large source touches most of the key index again. Other writers (the API) wait up to about this long.
 */
const BULK_TRANSACTION_MS = 1000;
/** Accepted records from which an import ends with leaks.afterLargeLoad() (VACUUM ANALYZE on PostgreSQL). */
const LARGE_LOAD = 10_000;

/** `threatmon import-leaks`: the API's ingestion path, fed from a file of any size, with a progress bar. */
export async function importLeaks(leaks: LeaksService, opts: ImportOptions): Promise<ImportReport> {
  const out = opts.out ?? process.stderr;
  if (!fs.existsSync(opts.file)) throw new ImportError(`no such file: ${opts.file}`);
  if ((opts.format === 'csv' || opts.format === 'tsv') === false && opts.columns) throw new ImportError('--columns names the columns of a headerless CSV or TSV: pass --format csv or --format tsv with it');
  let source = await leaks.findSourceByName(opts.source);
  if (!source) {
    if (!opts.createSource) throw new ImportError(`no leak source named "${opts.source}": create it first, or pass --create-source`);
    source = await leaks.createSource({ p: null, ip: null }, { name: opts.source, ...(opts.kind && { kind: opts.kind }) });
    out.write(`Created leak source "${opts.source}" (${source.id})${opts.kind ? `, kind ${opts.kind}` : ''}.\n`);
  } else if (opts.kind && source.kind !== opts.kind) {
    source = await leaks.updateSource({ p: null, ip: null }, source.id, { kind: opts.kind });
    out.write(`Leak source "${opts.source}" is now of kind ${opts.kind}.\n`);
  }
  if (opts.bulk) {
    await leaks.bulk.begin();
    out.write('Bulk load: search indexes are set aside until the end of the file (searches are slower meanwhile).\n');
  }
  const restoreCache = leaks.bulk.importPageCache();
  try {
    const report = await load(leaks, source, opts, out);
    if (opts.afterLargeLoad !== false && report.accepted >= LARGE_LOAD && !report.interrupted) await leaks.afterLargeLoad();
    return report;
  } finally {
    restoreCache();
    if (opts.bulk) {
      const started = Date.now();
      const ended = await leaks.bulk.end(undefined, () =>
        out.write(`Rebuilding search indexes${opts.signal?.aborted ? ' (Ctrl-C again to quit now and leave the rebuild to the next import or to threatmon serve)' : ''}...\n`),
      );
      if (ended === 'left to another import') out.write('Another bulk import is still loading into this database: it rebuilds the search indexes when it ends.\n');
      else out.write(`Search indexes rebuilt in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
    }
  }
}

async function load(leaks: LeaksService, source: { id: string }, opts: ImportOptions, out: NodeJS.WriteStream): Promise<ImportReport> {
  const size = fs.statSync(opts.file).size;
  const members: ImportReport['members'] = [];
  const bulk = opts.bulk || leaks.bulk.inBulkLoad;
  // PostgreSQL: the reader makes the rows COPY takes, and this thread forwards them.
  const made = await leaks.rowsMadeByReader(source.id);
  const job: ReadJob = {
    type: 'read',
    file: opts.file,
    sourceId: source.id,
    format: opts.format,
    separator: opts.separator,
    columns: opts.columns,
    rejects: opts.rejects,
    expansion: opts.expansion,
    ...(made ? { makeRows: { ...made, sourceId: source.id, maxRecords: bulk ? READER_ROWS_BATCH : BATCH_SIZE } } : {}),
  };
  // Where the reader stands in the file: the bar moves with it, even through input that gives no record.
  let position = 0;
  const worker = startReader(
    job,
    opts.signal,
    (m) => {
      members.push({ name: m.name, format: m.format, ...(m.separator ? { separator: m.separator } : {}) });
      out.write(`${opts.format ? 'Reading' : 'Detected'} ${m.name} as ${formatNamed(m.format)?.title ?? m.format}${m.separator ? ` (separator "${m.separator === '\t' ? '\\t' : m.separator}")` : ''}.\n`);
    },
    (bytes) => {
      position = bytes;
      progress();
    },
  );
  const started = Date.now();
  const showBar = opts.progress ?? Boolean(out.isTTY);
  const bar = showBar
    ? new SingleBar(
        {
          format: ' {bar} {percentage}% | {records} records | {rate} rec/s | ETA {eta_formatted} | accepted {accepted}, duplicates {duplicates}, rejected {rejected}',
          stream: out,
          hideCursor: true,
          etaBuffer: 50,
        },
        undefined,
      )
    : null;
  bar?.start(size, 0, { records: 0, rate: 0, accepted: 0, duplicates: 0, rejected: 0 });
  let lastLine = 0;
  let stored: { r: IngestReport; processed: number; bytes: number } = { r: { accepted: 0, duplicates: 0, rejected: [], alerts_raised: 0, exposures_found: 0 }, processed: 0, bytes: 0 };
  // Progress is the input of the records stored, not of those read (the reader runs up to 8 MiB
  // ahead), or where the reader stands when it reads on without finding a record.
  const progress = () => {
    const { r, processed, bytes } = stored;
    const seconds = (Date.now() - started) / 1000;
    const rate = Math.round(processed / Math.max(seconds, 0.001));
    const done = Math.min(Math.max(bytes, position), size);
    if (bar) {
      bar.update(done, { records: processed, rate, accepted: r.accepted, duplicates: r.duplicates, rejected: r.rejected.length });
    } else if (Date.now() - lastLine > 5000) {
      // Not a terminal (CI, a log file): a line every few seconds instead of a bar.
      lastLine = Date.now();
      // A pipe has no size to count against: no percentage then.
      out.write(`${processed} records${size > 0 ? ` (${Math.round((done / size) * 100)}%)` : ''}, ${rate} rec/s\n`);
    }
  };
  const onBatch = (r: IngestReport, processed: number, bytes: number) => {
    stored = { r, processed, bytes };
    progress();
  };
  let report: IngestReport;
  // The file could not be read to its end: what was read before is stored (see ingest()).
  let failure: Error | null = null;
  try {
    report = await leaks.ingest(source.id, worker.items(), { p: null, ip: null }, { onBatch, wordsGiven: true, ...(bulk ? { batchSize: BULK_BATCH_SIZE, transactionMs: BULK_TRANSACTION_MS } : {}) });
  } catch (err) {
    if (!(err instanceof IngestCutOff)) throw err;
    report = err.progress;
    failure = err.cause instanceof ImportError ? err.cause : new ImportError(err.message);
  }
  // A stop that came after the whole input was read stored everything: that is a finished import.
  const interrupted = opts.signal?.aborted === true && !worker.readToEnd;
  if (!interrupted && !failure) bar?.update(size);
  bar?.stop();
  const seconds = (Date.now() - started) / 1000;
  const rejected = report.rejected.length + (report.rejected_not_listed ?? 0);
  const total = report.accepted + report.duplicates + rejected;
  const stopped = failure ? 'Stopped' : interrupted ? 'Interrupted' : null;
  out.write(
    `${stopped ? `${stopped}: stored the first ${total} records of` : 'Imported'} ${opts.file} into "${opts.source}" in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))} records/s): ` +
      `${report.accepted} accepted, ${report.duplicates} duplicates, ${rejected} rejected` +
      `${report.alerts_raised ? `, ${report.alerts_raised} alerts raised` : ''}${report.exposures_found ? `, ${report.exposures_found} exposures found` : ''}.\n`,
  );
  const byLine = members.some((m) => m.format === 'combo' || m.format === 'stealer');
  for (const r of report.rejected.slice(0, 10)) {
    out.write(`  ${byLine ? 'line' : 'record'} ${r.index}: ${r.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}\n`);
  }
  if (rejected > 10) out.write(`  ... and ${rejected - 10} more rejected${opts.rejects ? ` (all of them in ${opts.rejects})` : ''}\n`);
  const topReasons = worker.reasons.sort((a, b) => b[1] - a[1]).slice(0, 5);
  if (rejected > 0) out.write(`Rejected, by reason: ${topReasons.map(([reason, n]) => `${n} ${reason}`).join('; ')}.\n`);
  if (worker.windows1252Lines > 0) out.write(`${worker.windows1252Lines} lines were not UTF-8 and were read as Windows-1252.\n`);
  for (const [, why] of worker.cut) out.write(`Not read to its end: ${why}.\n`);
  if (failure) {
    out.write('Mend the file from there and run the same command again: the records already stored are counted as duplicates.\n');
    throw failure;
  }
  if (interrupted) out.write('Run the same command again to load the rest: the records already stored are counted as duplicates.\n');
  if (worker.cut.length) throw new ImportError(`${worker.cut.length} compressed ${worker.cut.length === 1 ? 'member was' : 'members were'} not read to the end (the expansion limits); everything else was stored`);
  return { ...report, seconds, interrupted, members, windows1252Lines: worker.windows1252Lines, topReasons };
}

/** A reader thread that finished its last file cleanly, kept for the next import in this process. */
let idleReader: Worker | null = null;
/** Reader threads started by this process (for tests). */
export const readerThreads = { started: 0 };

function readerThread(): Worker {
  if (idleReader) {
    const worker = idleReader;
    idleReader = null;
    worker.ref();
    return worker;
  }
  const here = new URL(import.meta.url);
  const fromSource = here.pathname.endsWith('.ts');
  const entry = new URL(fromSource ? './import-worker.ts' : './import-worker.js', here);
  // Run from the TypeScript sources (tsx), the worker registers tsx itself: loaders are per thread.
  const boot = fromSource
    ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`
    : `import(${JSON.stringify(entry.href)})`;
  readerThreads.started++;
  return new Worker(boot, { eval: true });
}

/**
 * Reading, parsing and normalising run in a worker thread (the import's second core); this thread
 * only writes. Batches are acknowledged as they are consumed, so at most a few wait in memory. A
 * thread that read its file to the end waits, unreferenced (it keeps no process alive), for the
 * next import; one stopped part-way is ended.
 */
function startReader(job: ReadJob, signal: AbortSignal | undefined, onMember: (m: Extract<ReaderMessage, { type: 'member' }>) => void, onPosition: (bytes: number) => void = () => undefined) {
  const file = job.file;
  const state = { readToEnd: false, reasons: [] as Array<[string, number]>, windows1252Lines: 0, cut: [] as Array<[string, string]> };
  async function* items(): AsyncGenerator<IngestItem[]> {
    const worker = readerThread();
    // Each item carries the bytes of input it was read from: the writer cuts its batches by them too.
    type Message = ReaderBatch | Exclude<ReaderMessage, { type: 'position' }>;
    const queue: Message[] = [];
    let wake: (() => void) | null = null;
    let failed: Error | null = null;
    const onMessage = (m: ReaderBatch | ReaderMessage) => {
      // Where the reading stands is shown at once, not after the batches read before it.
      if (m.type === 'position') return onPosition(m.bytes);
      queue.push(m);
      wake?.();
    };
    const onError = (err: Error) => {
      failed = err;
      wake?.();
    };
    // Stopped: the batches read ahead are dropped, and the writer stores what it was given.
    const onAbort = () => wake?.();
    worker.on('message', onMessage);
    worker.on('error', onError);
    signal?.addEventListener('abort', onAbort);
    worker.postMessage(job);
    try {
      for (;;) {
        while (queue.length === 0 && !failed && !signal?.aborted) await new Promise<void>((r) => (wake = r));
        if (failed) throw failed;
        if (signal?.aborted) return;
        const m = queue.shift() as Message;
        if (m.type === 'member') {
          onMember(m);
          continue;
        }
        if (m.type === 'done') {
          state.readToEnd = true;
          state.reasons = m.reasons;
          state.windows1252Lines = m.windows1252Lines;
          state.cut = m.cut;
          return;
        }
        if (m.type === 'error') throw new ImportError(`cannot read ${file} past its first ${m.items} records: ${m.message}`);
        worker.postMessage('ack');
        // Nothing more has arrived after this batch: the writer writes what it holds (see ingest()).
        yield readerItems(m, queue.length === 0);
      }
    } finally {
      worker.off('message', onMessage);
      worker.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      if (state.readToEnd && !idleReader) {
        worker.unref();
        idleReader = worker;
      } else {
        await worker.terminate();
      }
    }
  }
  return {
    items,
    /** Whether every item of the input was handed to the writer (a stop after that lost nothing). */
    get readToEnd() {
      return state.readToEnd;
    },
    get reasons() {
      return state.reasons;
    },
    get windows1252Lines() {
      return state.windows1252Lines;
    },
    /** The members the expansion limits ended early, with why. */
    get cut() {
      return state.cut;
    },
  };
}
