import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ControlledTransaction, Kysely } from 'kysely';
import { unreachableShard } from '../../db/corpus-shards.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import type { NormalisedRecord } from '../../domain/leak-record.js';
import { AppError, type FieldError } from '../../http/errors.js';
import type { AuditLog } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import type { AppHookRegistry, IngestedRecords, InsertedRecord } from '../hooks.js';
import type { EncodedRows } from './leaks.copy-rows.js';
import { counterDeltas, domainDeltas, newTransactionCounts, type TransactionCounts } from './leaks.counters.js';
import type { LeaksRepository, SourceRow } from './leaks.repository.js';
import { type IngestItem, type IngestItems, recordResult } from './input/index.js';

/**
 * A batch is written once it holds this many bytes of input, however few records that is: memory
 * stays flat when records are large (an `extra` may hold 50 values of 2,048 characters).
 */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;

/** How ingest() writes: the defaults suit an API request; the CLI's bulk load asks for more. */
export interface IngestOptions {
  /** After each commit: the records processed so far, and the input bytes they came from (items' `bytes`). */
  onBatch?: (report: IngestReport, processed: number, processedBytes: number) => void;
  /** The largest batch: batches start at BATCH_SIZE and double up to it. */
  batchSize?: number;
  /**
   * How long a transaction stays open for more batches: the first batch written after this many
   * milliseconds commits it. 0 (the default): every batch is its own transaction. An open
   * transaction holds the database connection while the next items arrive, so more than 0 is for
   * a process that does nothing else meanwhile: the CLI's bulk load (see BULK_TRANSACTION_MS).
   */
  transactionMs?: number;
  /**
   * The items give their records' search words (IngestItem.words; the CLI's reader thread): a
   * batch's words for leak_words are those given with its items, not split from its records here.
   */
  wordsGiven?: boolean;
}

/**
 * A batch as it is stored: its records, or rows made elsewhere (IngestItem.encoded), and with
 * IngestOptions.wordsGiven, the words given with its items.
 */
interface Batch {
  records: NormalisedRecord[];
  encoded?: { rows: EncodedRows; records: number };
  words?: ReadonlyArray<readonly string[]>;
}

export interface IngestReport {
  accepted: number;
  duplicates: number;
  rejected: Array<{ index: number; errors: FieldError[] }>;
  /** Rejections beyond MAX_REPORTED_REJECTIONS, counted but not listed. */
  rejected_not_listed?: number;
  alerts_raised: number;
  exposures_found: number;
}

export const BATCH_SIZE = 1000;

/** PostgreSQL's deadlock_detected: the victim's transaction was rolled back and may be run again. */
const isDeadlock = (err: unknown) => (err as { code?: unknown } | null)?.code === '40P01';
/** How many times a transaction is tried in all when PostgreSQL keeps picking it as a deadlock's victim. */
const DEADLOCK_ATTEMPTS = 5;

/** An ingest's report with how many items it had taken (stored, duplicate or rejected) when it stopped. */
export type IngestProgress = IngestReport & { processed: number };

/**
 * The items of an ingest failed part-way (a file that cannot be read on, a stream cut off): every
 * item read before the failure is stored, and `progress` says how many. An AppError from the items
 * (413 past a stream's limit) stays an AppError, with the progress in its detail and body instead.
 */
export class IngestCutOff extends Error {
  constructor(
    override readonly cause: unknown,
    readonly progress: IngestProgress,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'IngestCutOff';
  }
}

export const MAX_REPORTED_REJECTIONS = 10_000;

/**
 * Ingestion: records in batches, each stored with its counters and with what the leaks.ingested
 * hooks raise for it, in one transaction.
 */
export class LeakIngest {
  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'metrics'>,
    private readonly repo: LeaksRepository,
    private readonly audit: AuditLog,
    private readonly hooks: AppHookRegistry,
    private readonly sources: { get(id: string): Promise<SourceRow> },
    /** A bulk load in progress shows it is alive with each commit. */
    private readonly bulk: { heartbeat(): void },
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  /**
   * Ingests records from any (async) iterable, in batches of BATCH_SIZE, each written with its
   * counters and what the ingest hooks raise, and committed (see `transactionMs`). Re-ingesting the
   * same records adds nothing. A failure leaves the committed batches in place and says how far it got.
   */
  async ingest(sourceId: string, items: IngestItems, actor: { p: Principal | null; ip: string | null }, options: IngestOptions = {}): Promise<IngestReport> {
    const source = await this.sources.get(sourceId);
    const run = new IngestRun(this.deps, options, {
      opened: (trx) => this.repo.holdSource(trx, source.id),
      store: (trx, batch, report, counts) => this.storeBatch(trx, source, batch, report, counts),
      writeCounts: (trx, counts) => this.writeCounts(trx, source, counts),
      wordsCommitted: (counts) => this.repo.wordsCommitted(counts.words),
    });
    try {
      for await (const got of items) {
        const some: readonly IngestItem[] = Array.isArray(got) ? got : [got as IngestItem];
        for (const item of some) if (run.take(item)) await run.store();
      }
      await run.store();
    } catch (err) {
      if (err === run.stopped) throw err;
      // The items failed part-way (a stream cut off or past its limit, a file that cannot be read
      // on): what was read before is stored too, as it would have been had the items ended there,
      // and the error says how far the ingest got (committed below, as every ingest's last batches are).
      await run.store();
      throw run.cutOff(err);
    } finally {
      // The batches written in the open transaction are kept, as they would have been had each
      // been committed on its own.
      await run.commit();
    }
    const report = run.finish();
    this.deps.metrics.ingested.inc({ outcome: 'accepted' }, report.accepted);
    this.deps.metrics.ingested.inc({ outcome: 'rejected' }, report.rejected.length);
    await this.audit.recordAs(this.db, actor, {
      action: 'leak_records.ingested',
      targetType: 'leak_source',
      targetId: source.id,
      changes: { accepted: report.accepted, duplicates: report.duplicates, rejected: report.rejected.length },
    });
    return report;
  }

  /**
   * The counters of the open transaction's batches: added up batch by batch, then written once when
   * it commits: a bulk load's transaction holds several batches, and the per-domain upserts of each
   * batch were a visible share of its writing.
   */
  private async writeCounts(trx: Kysely<DB>, source: SourceRow, counts: TransactionCounts) {
    await this.repo.bumpCounters(trx, counts.corpus);
    await this.repo.bumpCounters(trx, counts.domains, 'leak_domain_counts');
    if (counts.records) await this.repo.addToRecordCount(trx, source.id, counts.records);
    // A bulk load shows it is alive with each commit (the same connection: in this transaction).
    this.bulk.heartbeat();
  }

  /** Writes a batch in `trx` with what the ingest hooks raise, adding its counter changes to `counts` (see writeCounts). */
  private async storeBatch(trx: Kysely<DB>, source: SourceRow, batch: Batch, report: IngestReport, counts: TransactionCounts) {
    const parts: Array<{ stored: IngestedRecords; offered: number }> = [];
    if (batch.records.length) parts.push(await this.storeRecords(trx, source, batch, counts));
    if (batch.encoded) parts.push(await this.storeEncoded(trx, source, batch.encoded, batch.words ?? [], counts));
    const ingestHooks = this.hooks.of('leaks.ingested');
    for (const { stored, offered } of parts) {
      counts.records += stored.count;
      let alerts = 0;
      let exposures = 0;
      for (const hook of ingestHooks) {
        const r = await hook(trx, stored, { id: source.id, name: source.name });
        alerts += r.alerts;
        exposures += r.exposures;
      }
      report.accepted += stored.count;
      report.duplicates += offered - stored.count;
      report.alerts_raised += alerts;
      report.exposures_found += exposures;
    }
  }

  /** A batch's records, with their counter changes. */
  private async storeRecords(trx: Kysely<DB>, source: SourceRow, { records, words }: Batch, counts: TransactionCounts) {
    const { inserted, insertedIds } = await this.repo.insertRecords(trx, source.id, records, this.now(), counts.words, words);
    counterDeltas(inserted, source.breach_date, 1, counts.corpus);
    domainDeltas(inserted, 1, counts.domains);
    // The batch's own records take their id and source when a hook asks for them: a copy of each,
    // and its garbage, cost a bulk import an eighth of its time. A retried batch sets them again.
    const load = async () => {
      const forHooks = inserted as Array<NormalisedRecord & Partial<InsertedRecord>>;
      forHooks.forEach((r, i) => {
        r.id = insertedIds[i] as string;
        r.source_id = source.id;
      });
      return forHooks as InsertedRecord[];
    };
    return { stored: { count: inserted.length, load }, offered: records.length };
  }

  /**
   * Rows made where they were read: written as they are, their counter changes as counted there
   * when every row was new; else, and for the hooks that have something to match, the rows stored
   * are read back (once).
   */
  private async storeEncoded(trx: Kysely<DB>, source: SourceRow, encoded: NonNullable<Batch['encoded']>, words: ReadonlyArray<readonly string[]>, counts: TransactionCounts) {
    const ids = await this.repo.insertEncoded(trx, source.id, encoded.rows, counts.words, words);
    let read: Promise<InsertedRecord[]> | undefined;
    const load = () => (read ??= this.repo.storedRecords(trx, ids));
    const given = encoded.rows.counts;
    if (given && ids.length === encoded.rows.ids.length) {
      for (const [key, n] of given.corpus) counts.corpus.set(key, (counts.corpus.get(key) ?? 0) + n);
      for (const [key, n] of given.domains) counts.domains.set(key, (counts.domains.get(key) ?? 0) + n);
    } else if (ids.length) {
      const stored = await load();
      counterDeltas(stored, source.breach_date, 1, counts.corpus);
      domainDeltas(stored, 1, counts.domains);
    }
    return { stored: { count: ids.length, load }, offered: encoded.records };
  }
}

/** What a run writes through: a batch with what the hooks raise, the counters at commit, the words committed. */
interface RunWrites {
  /** As a transaction opens: what it holds until its commit (the source: LeaksRepository.holdSource). */
  opened(trx: Kysely<DB>): Promise<void>;
  store(trx: Kysely<DB>, batch: Batch, report: IngestReport, counts: TransactionCounts): Promise<void>;
  writeCounts(trx: Kysely<DB>, counts: TransactionCounts): Promise<void>;
  wordsCommitted(counts: TransactionCounts): void;
}

/**
 * One ingest's state and its steps: take an item, store the batch, open a transaction, commit it,
 * retry it after a deadlock, stop. Batches start at BATCH_SIZE and double up to `batchSize`, so a
 * bulk load starts writing early; one of at least BATCH_SIZE is written as soon as the reader has
 * no more ready (`pause`), so that neither thread waits for the other.
 */
class IngestRun {
  readonly report: IngestReport = { accepted: 0, duplicates: 0, rejected: [], alerts_raised: 0, exposures_found: 0 };
  /** What stop() made: a failure of the ingest itself, not of its items. */
  stopped: AppError | null = null;
  private batch: NormalisedRecord[] = [];
  private batchEncoded: Batch['encoded'];
  private batchBytes = 0;
  /** The words given with the batch's items (IngestOptions.wordsGiven). */
  private batchWords: Array<readonly string[]> = [];
  private limit: number;
  private processed = 0;
  private processedBytes = 0;
  /** Items processed up to the last commit: where a failure says the ingest got. */
  private committed = 0;
  private trx: ControlledTransaction<DB> | null = null;
  private openedAt = 0;
  /** What the open transaction holds that is not committed yet: items processed up to its last batch, their input bytes, its valid records. */
  private readonly written = { processed: 0, bytes: 0, records: 0 };
  /** The counter changes of the open transaction's batches, written once as it commits. */
  private counts = newTransactionCounts();
  /**
   * The open transaction's batches: stored again in a new transaction if PostgreSQL picks it as a
   * deadlock's victim. Rows are locked in key order, so this only backs that order up.
   */
  private pending: Batch[] = [];
  /** The report's figures as of the last commit: what a failure reports. */
  private atCommit: Pick<IngestReport, 'accepted' | 'duplicates' | 'alerts_raised' | 'exposures_found'>;
  private readonly batchSize: number;
  private readonly transactionMs: number;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'metrics'>,
    private readonly options: IngestOptions,
    private readonly writes: RunWrites,
  ) {
    this.batchSize = options.batchSize ?? BATCH_SIZE;
    this.transactionMs = options.transactionMs ?? 0;
    this.limit = Math.min(this.batchSize, BATCH_SIZE);
    this.atCommit = this.figures();
  }

  /** Takes one item: true when its batch is full and is to be stored now. */
  take(item: IngestItem): boolean {
    const { index, value, result, bytes, pause, words } = item;
    if (words) this.batchWords.push(words);
    this.processedBytes += bytes ?? 0;
    if (item.encoded) {
      // Rows made elsewhere are a batch of their own: stored now.
      this.processed += item.encoded.records;
      this.batchEncoded = item.encoded;
      return true;
    }
    this.processed++;
    const r = result ?? recordResult(value);
    if (!r.ok) {
      if (this.report.rejected.length < MAX_REPORTED_REJECTIONS) this.report.rejected.push({ index, errors: r.errors });
      else this.report.rejected_not_listed = (this.report.rejected_not_listed ?? 0) + 1;
    } else {
      this.batch.push(r.record);
      this.batchBytes += bytes ?? 0;
    }
    return this.batch.length >= this.limit || this.batchBytes >= MAX_BATCH_BYTES || (pause === true && this.batch.length >= BATCH_SIZE);
  }

  /** Stores the batch in the open transaction (opening one), and commits once it has been open `transactionMs`. */
  async store(): Promise<void> {
    if (this.batch.length === 0 && !this.batchEncoded) return;
    const batch: Batch = { records: this.batch, ...(this.batchEncoded ? { encoded: this.batchEncoded } : {}), ...(this.options.wordsGiven ? { words: this.batchWords } : {}) };
    this.batch = [];
    this.batchEncoded = undefined;
    this.batchWords = [];
    this.batchBytes = 0;
    this.limit = Math.min(this.batchSize, this.limit * 2);
    await this.retryingDeadlocks((t) => this.writes.store(t, batch, this.report, this.counts));
    this.pending.push(batch);
    this.written.processed = this.processed;
    this.written.bytes = this.processedBytes;
    this.written.records += batch.records.length + (batch.encoded?.records ?? 0);
    if (this.deps.clock().getTime() - this.openedAt >= this.transactionMs) await this.commit();
  }

  /** Commits the open transaction with its counters, if one is open. */
  async commit(): Promise<void> {
    if (!this.trx) return;
    const shards = this.deps.database.corpusShards;
    let trx: ControlledTransaction<DB> | null = null;
    await this.retryingDeadlocks(async (t) => {
      trx = t;
      await this.writes.writeCounts(t, this.counts);
      await shards?.beforeCommit(t);
      await t.commit().execute();
    });
    if (shards && trx) await shards.afterCommit(trx, this.deps.database.db);
    this.writes.wordsCommitted(this.counts);
    this.trx = null;
    this.pending = [];
    this.counts = newTransactionCounts();
    this.committed = this.written.processed;
    this.atCommit = this.figures();
    this.deps.metrics.ingested.inc({ outcome: 'processed' }, this.written.records);
    this.written.records = 0;
    this.options.onBatch?.(this.report, this.written.processed, this.written.bytes);
    // The event loop turns after each commit, so a timer, a signal (Ctrl-C) or another request
    // gets its turn: fed by a reader that keeps ahead, an import never yields otherwise. Once per
    // commit, not per batch: yielding more often made a bulk load's batches smaller.
    await yieldToEventLoop();
  }

  /** The report once every item is committed (the last progress call says so). */
  finish(): IngestReport {
    this.committed = this.processed;
    this.options.onBatch?.(this.report, this.processed, this.processedBytes);
    return this.report;
  }

  /** The error of items that failed part-way, with how far the ingest got (see IngestCutOff). */
  cutOff(err: unknown): Error {
    const progress: IngestProgress = { ...this.report, processed: this.processed };
    if (err instanceof AppError) return new AppError(err.code, err.status, `${err.detail} ${this.progressDetail(this.processed)}`, { ...err.extra, body: { ...err.extra.body, ...progress } });
    return new IngestCutOff(err, progress);
  }

  private figures() {
    const { accepted, duplicates, alerts_raised, exposures_found } = this.report;
    return { accepted, duplicates, alerts_raised, exposures_found };
  }

  private progressDetail(n: number) {
    return `Ingestion stopped after ${n} records (${this.report.accepted} accepted); every record before that is stored. Re-send the rest: duplicates are skipped.`;
  }

  /** Opens a transaction when none is open. */
  private async open(): Promise<ControlledTransaction<DB>> {
    if (!this.trx) {
      this.trx = await this.deps.database.db.startTransaction().execute();
      this.openedAt = this.deps.clock().getTime();
      await this.writes.opened(this.trx);
    }
    return this.trx;
  }

  /** Forgets what the open transaction holds, in the database and in the report. */
  private async rollBack(): Promise<void> {
    await this.trx?.rollback().execute().catch(() => undefined);
    if (this.trx) await this.deps.database.corpusShards?.afterRollback(this.trx, this.deps.database.db);
    this.trx = null;
    this.counts = newTransactionCounts();
    Object.assign(this.report, this.atCommit);
  }

  /** Undoes what the open transaction holds and says how far the ingest got: the run stops here. */
  private async stop(err: unknown): Promise<AppError> {
    await this.rollBack();
    this.pending = [];
    // A corpus shard that cannot be reached is named (see corpus-shards.ts).
    const shard = unreachableShard(err);
    const progress = this.progressDetail(this.committed);
    const body = { ...this.report, processed: this.committed, ...(shard ? { unavailable: shard } : {}) };
    // An error meant for the client (the source deleted meanwhile: 404) stays what it is.
    this.stopped =
      err instanceof AppError
        ? new AppError(err.code, err.status, `${err.detail} ${progress}`, { ...err.extra, body: { ...err.extra.body, ...body } })
        : new AppError('unavailable', 503, shard ? `The ${shard} cannot be reached. ${progress}` : progress, { body, headers: shard ? { 'retry-after': '30' } : undefined });
    // Logged (with the request id) by the error handler; never shown to the client.
    this.stopped.cause = err;
    return this.stopped;
  }

  /**
   * Runs `step` on the open transaction; after a deadlock, rolls it back and stores its batches
   * again in a new one (the report back at the last commit), then runs `step` again.
   */
  private async retryingDeadlocks(step: (trx: ControlledTransaction<DB>) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await step(await this.open());
        return;
      } catch (err) {
        if (!isDeadlock(err) || attempt >= DEADLOCK_ATTEMPTS) throw await this.stop(err);
        this.deps.metrics.ingestDeadlocks.inc();
        await this.rollBack();
        const again = this.pending;
        this.pending = [];
        await this.retryingDeadlocks(async (t) => {
          for (const b of again) await this.writes.store(t, b, this.report, this.counts);
        });
        this.pending = again;
      }
    }
  }
}
