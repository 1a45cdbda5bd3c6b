import { randomBytes, randomInt } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type ControlledTransaction, type Insertable, type Kysely, type QueryCreator, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { DB, LeakRecordsTable, LeakSourcesTable } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { type ClassedRecord, DATA_CLASSES, DATA_CLASS_TESTS, type FullTextTerm, type NormalisedRecord, parseFullText, prefixEnd, type RecordResult, recordKey, sha1Hex } from '../../domain/leak-record.js';
import type { Principal } from '../auth/principal.js';
import { AppError, conflict, type FieldError, notFound } from '../../http/errors.js';
import { given, invalidPage, type ListQuery, type ListResult, Listing, listResult, onlyParams, pageParams } from '../../http/listing.js';
import type { AuditLog } from '../audit/audit.repository.js';
import { diff } from '../audit/audit.repository.js';
import { assertHasCriterion, domainRange, type LeakSearchContext, leakSearch } from './leaks.search.js';
import { beginBulkLoad, bulkLoadState, finishBulkLoad, heartbeat, leaveBulkLoad, liveBulkLoaders } from './bulk-load.js';
import { recordResult } from './ndjson-lines.js';
import type { LeakSourceOut } from './leaks.schemas.js';
import type { AppHookRegistry, InsertedRecord } from '../hooks.js';

type SourceRow = Selectable<LeakSourcesTable>;
/** A record as found by a search: its id and its JSON text (see RECORD_JSON). */
type RecordRow = { id: string; json: string };

/**
 * One record to ingest: raw (`value`), or already normalised elsewhere (`result`, e.g. by the CLI's
 * reader thread, with the `bytes` of input it was read from; a `key` in it must be this source's).
 */
export type IngestItem =
  | { index: number; value: unknown; result?: undefined; bytes?: undefined; pause?: undefined }
  | {
      index: number;
      result: RecordResult;
      value?: undefined;
      bytes?: number;
      /**
       * The last item its producer has ready (the CLI's reader thread, between batches): the batch
       * is written now, if it holds BATCH_SIZE records, rather than after waiting for more.
       */
      pause?: boolean;
    };

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

/** Counter changes of an ingest's open transaction (see LeaksService.writeCounts). */
interface TransactionCounts {
  /** leak_counters: total, data classes, months. */
  corpus: Map<string, number>;
  /** leak_domain_counts, by reversed domain. */
  domains: Map<string, number>;
  /** Records added to the source. */
  records: number;
}

const newTransactionCounts = (): TransactionCounts => ({ corpus: new Map(), domains: new Map(), records: 0 });
/** Pages of write-ahead log (256 MiB) after which a bulk load checkpoints: SQLite's 1,000 checkpoint too often for a load. */
const BULK_WAL_PAGES = 65_536;
/** SQLite page cache (KiB) of a plain CLI import: half a server's, which keeps the import under its memory target at the same speed. */
const PLAIN_IMPORT_CACHE_KIB = 32 * 1024;
/**
 * A process taking part in a bulk load that showed it was alive this recently (each commit, about
 * every second while records flow; each step of a rebuild) is still loading, unless it is seen to
 * be gone: see liveBulkLoaders. An import whose input stalls for longer counts as interrupted.
 */
export const BULK_LOAD_ALIVE_MS = 2 * 60_000;
/** A padded range answer (Add-Padding: true) holds this many lines at least and at most, as Have I Been Pwned's does. */
const PADDED_MIN = 800;
const PADDED_MAX = 1000;
/** A domain search merges the index ranges of at most this many domains (the domain and its subdomains). */
const MAX_MERGED_DOMAINS = 32;
/** Most words a prefix of `q` is spelled out as (see expandPrefixes); beyond, it runs as a prefix. */
const MAX_PREFIX_COMPLETIONS = 64;
const DOMAIN_SEARCH_PARAMS = new Set(['domain', 'exact_domain', 'page', 'page_size', 'ordering']);
export const MAX_REPORTED_REJECTIONS = 10_000;

export const sourceListing = new Listing({
  filters: {
    is_verified: { kind: 'boolean', column: 'is_verified', description: 'Only verified (true) or unverified (false) sources.' },
    data_classes: {
      kind: 'custom',
      schema: { type: 'string', description: `Only sources exposing all these data classes (comma list of ${DATA_CLASSES.join(', ')}).` } as never,
      apply: (qb, value) => {
        let q = qb;
        for (const c of String(value).split(',').map((v) => v.trim()).filter(Boolean)) {
          if (!(DATA_CLASSES as readonly string[]).includes(c)) {
            throw new AppError('invalid_query', 400, `data_classes: must be among ${DATA_CLASSES.join(', ')}`, { errors: [{ field: 'data_classes', message: `must be among ${DATA_CLASSES.join(', ')}` }] });
          }
          q = q.where('data_classes', 'like', `%"${c}"%`);
        }
        return q;
      },
    },
  },
  search: ['name', 'description'],
  ordering: { created_at: 'created_at', name: 'name', breach_date: 'breach_date', record_count: 'record_count' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export const savedSearchListing = new Listing({
  search: ['name'],
  ordering: { created_at: 'created_at', name: 'name', last_run_at: 'last_run_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export function presentSource(r: SourceRow): LeakSourceOut {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    breach_date: r.breach_date,
    discovered_at: r.discovered_at,
    data_classes: JSON.parse(r.data_classes) as LeakSourceOut['data_classes'],
    is_verified: Boolean(r.is_verified),
    record_count: r.record_count,
    created_at: r.created_at,
  };
}

/** A PostgreSQL timestamp column as toISOString() writes it (MS truncates, as pgTimestampToIso does). */
const pgIso = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * A leak record as the JSON text of LeakRecordSchema, built by the database, so that a page of
 * records reaches the response without being decoded and encoded again (the search's largest cost).
 * Timestamps as toISOString() writes them; test/modules/leak-record-json.test.ts holds the text to
 * the schema, field by field.
 */
const RECORD_JSON: Record<Dialect, RawBuilder<string>> = {
  postgres: sql<string>`(select row_to_json(o)::text from (select leak_records.id,
      (select row_to_json(s) from (select leak_records.source_id as id, leak_sources.name) as s) as source,
      leak_records.email, leak_records.username, leak_records.domain, leak_records.ip, leak_records.phone,
      leak_records.full_name, leak_records.password_masked, left(leak_records.password_sha1, 5) as password_sha1_prefix,
      leak_records.password_sha1 is not null as has_password, leak_records.extra::json as extra,
      ${pgIso('leak_records.leaked_at')} as leaked_at, ${pgIso('leak_records.created_at')} as created_at) as o)`,
  sqlite: sql<string>`json_object('id', leak_records.id,
    'source', json_object('id', leak_records.source_id, 'name', leak_sources.name),
    'email', leak_records.email, 'username', leak_records.username, 'domain', leak_records.domain,
    'ip', leak_records.ip, 'phone', leak_records.phone, 'full_name', leak_records.full_name,
    'password_masked', leak_records.password_masked, 'password_sha1_prefix', substr(leak_records.password_sha1, 1, 5),
    'has_password', json(case when leak_records.password_sha1 is null then 'false' else 'true' end),
    'extra', json(leak_records.extra), 'leaked_at', leak_records.leaked_at, 'created_at', leak_records.created_at)`,
};

const RECORD_COLUMNS = [
  'id',
  'source_id',
  'email',
  'username',
  'username_lower',
  'domain',
  'domain_rev',
  'ip',
  'ip_key',
  'phone',
  'full_name',
  'password_sha1',
  'password_masked',
  'extra',
  'leaked_at',
  'fingerprint',
  'search_text',
  'created_at',
] as const;

/** A record's values in RECORD_COLUMNS order. */
function recordValues(r: NormalisedRecord, id: string, sourceId: string, at: string) {
  return [id, sourceId, r.email, r.username, r.username_lower, r.domain, r.domain_rev, r.ip, r.ip_key, r.phone, r.full_name, r.password_sha1, r.password_masked, JSON.stringify(r.extra), r.leaked_at, r.key ?? recordKey(sourceId, r.fingerprint), r.search_text, at];
}

export class LeaksService {
  private insertStatement?: import('better-sqlite3').Statement;
  private readonly counterStatements = new Map<string, import('better-sqlite3').Statement>();
  /** This connection's settings before the bulk load it began (see beginBulkLoad). */
  private beforeBulk?: { cacheSize: number; walAutocheckpoint: number };

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'metrics'>,
    private readonly audit: AuditLog,
    private readonly hooks: AppHookRegistry,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  // --- sources ---

  listSources(query: ListQuery): Promise<ListResult<LeakSourceOut>> {
    const qb = sourceListing.filter(this.db.selectFrom('leak_sources').selectAll(), query, { dialect: this.deps.database.dialect });
    return sourceListing.page(qb, query, presentSource);
  }

  async getSource(id: string, db: Kysely<DB> = this.db): Promise<SourceRow> {
    const row = await db.selectFrom('leak_sources').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('No such leak source.');
    return row;
  }

  findSourceByName(name: string) {
    return this.db.selectFrom('leak_sources').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async createSource(
    actor: { p: Principal | null; ip: string | null },
    body: { name: string; description?: string; breach_date?: string | null; discovered_at?: string | null; data_classes?: string[]; is_verified?: boolean },
  ): Promise<SourceRow> {
    return this.db.transaction().execute(async (trx) => {
      if (await trx.selectFrom('leak_sources').select('id').where('name', '=', body.name).executeTakeFirst()) {
        throw conflict(`A leak source named "${body.name}" already exists.`, 'duplicate');
      }
      const at = this.now();
      const row = {
        id: this.deps.newId(),
        name: body.name,
        description: body.description ?? '',
        breach_date: body.breach_date ?? null,
        discovered_at: body.discovered_at ?? null,
        data_classes: JSON.stringify(body.data_classes ?? []),
        is_verified: body.is_verified ?? false,
        created_at: at,
        updated_at: at,
      };
      await trx.insertInto('leak_sources').values(row).execute();
      await this.audit.recordAs(trx, actor, { action: 'leak_source.created', targetType: 'leak_source', targetId: row.id, changes: { name: row.name } });
      return this.getSource(row.id, trx);
    });
  }

  async updateSource(actor: { p: Principal; ip: string }, id: string, patch: Record<string, unknown>, assertVersion: (v: number) => void) {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.getSource(id, trx);
      assertVersion(current.version);
      const changes = diff(presentSource(current) as unknown as Record<string, unknown>, patch);
      if (Object.keys(changes).length === 0) return current;
      if (changes.name && (await trx.selectFrom('leak_sources').select('id').where('name', '=', String(patch.name)).executeTakeFirst())) {
        throw conflict(`A leak source named "${String(patch.name)}" already exists.`, 'duplicate');
      }
      const set: Record<string, unknown> = { ...patch, updated_at: this.now() };
      if (patch.data_classes !== undefined) set.data_classes = JSON.stringify(patch.data_classes);
      await trx
        .updateTable('leak_sources')
        .set((eb) => ({ ...(set as object), version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .execute();
      await this.audit.recordAs(trx, actor, { action: 'leak_source.updated', targetType: 'leak_source', targetId: id, changes });
      return this.getSource(id, trx);
    });
  }

  /** Removes a source and its records in batches (each its own transaction, counters kept right), yielding between them. */
  async deleteSource(actor: { p: Principal; ip: string }, id: string) {
    const source = await this.getSource(id);
    for (;;) {
      const done = await this.db.transaction().execute(async (trx) => {
        const rows = await trx
          .selectFrom('leak_records')
          .select(['id', 'email', 'username', 'domain_rev', 'ip', 'phone', 'full_name', 'password_sha1', 'extra', 'leaked_at'])
          .where('source_id', '=', id)
          .limit(2000)
          .execute();
        if (rows.length === 0) return true;
        await trx.deleteFrom('leak_records').where('id', 'in', rows.map((r) => r.id)).execute();
        await this.bumpCounters(trx, this.counterDeltas(rows, source.breach_date, -1));
        await this.bumpCounters(trx, this.domainDeltas(rows, -1), 'leak_domain_counts');
        return false;
      });
      if (done) break;
      await yieldToEventLoop();
    }
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('leak_sources').where('id', '=', id).execute();
      await this.audit.recordAs(trx, actor, { action: 'leak_source.deleted', targetType: 'leak_source', targetId: id, changes: { name: source.name, record_count: source.record_count } });
    });
  }

  // --- ingestion ---

  /**
   * The corpus counter changes of records added (+1) or removed (-1): total, each data class,
   * with_password, and the month leaked (else the source's breach date). Counted per batch, keys
   * made once: building each record's keys was about a twentieth of a bulk load's writing.
   */
  private counterDeltas(records: Array<ClassedRecord & { leaked_at: string | null }>, breachDate: string | null, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
    const classes = DATA_CLASS_TESTS.map(() => 0);
    const months = new Map<string, number>();
    for (const r of records) {
      DATA_CLASS_TESTS.forEach(([, has], i) => {
        if (has(r)) classes[i] = (classes[i] as number) + 1;
      });
      const when = r.leaked_at ?? breachDate;
      if (when) {
        const month = when.slice(0, 7);
        months.set(month, (months.get(month) ?? 0) + 1);
      }
    }
    const add = (key: string, n: number) => deltas.set(key, (deltas.get(key) ?? 0) + n);
    add('total', sign * records.length);
    DATA_CLASS_TESTS.forEach(([c], i) => add(`class:${c}`, sign * (classes[i] as number)));
    // Records with a password are those of the password class (in `deltas` as given, too).
    deltas.set('with_password', deltas.get('class:password') as number);
    for (const [month, n] of months) add(`month:${month}`, sign * n);
    return deltas;
  }

  /** Adds `deltas` to the corpus counters, or (domains) to the per-domain counts. */
  private async bumpCounters(trx: Kysely<DB>, deltas: Map<string, number>, table: 'leak_counters' | 'leak_domain_counts' = 'leak_counters') {
    const raw = this.deps.database.sqlite;
    if (raw) {
      let upsert = this.counterStatements.get(table);
      if (!upsert) {
        upsert = raw.prepare(`insert into ${table} (key, n) values (?, ?) on conflict (key) do update set n = ${table}.n + excluded.n`);
        this.counterStatements.set(table, upsert);
      }
      for (const [key, n] of deltas) if (n !== 0) upsert.run(key, n);
      return;
    }
    // PostgreSQL: one statement per 1,000 keys (a batch can touch hundreds of domains), keys in
    // order so that concurrent ingests lock counter rows in the same order.
    const values = [...deltas].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, n]) => ({ key, n }));
    for (let i = 0; i < values.length; i += 1000) {
      await trx
        .insertInto(table)
        .values(values.slice(i, i + 1000))
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ n: eb(`${table}.n`, '+', eb.ref('excluded.n')) })))
        .execute();
    }
  }

  /**
   * PostgreSQL: the full-text words of new records into leak_words (see migration 0008), each word
   * of their search text tokenised by PostgreSQL itself, so that the words are exactly the lexemes
   * of the records' tsvectors. In order, so that concurrent ingests lock them in the same order.
   */
  private async addWords(trx: Kysely<DB>, records: NormalisedRecord[]) {
    const words = new Set<string>();
    for (const r of records) for (const w of r.search_text.split(' ')) if (w) words.add(w);
    await sql`insert into leak_words (word)
      select distinct lexeme from unnest(${[...words]}::text[]) as t(word)
        cross join lateral unnest(tsvector_to_array(to_tsvector('simple', t.word))) as lexeme
      order by 1 on conflict do nothing`.execute(trx);
  }

  /** Per-domain count changes of records added (+1) or removed (-1), added to `deltas` when given. */
  private domainDeltas(records: Array<{ domain_rev: string | null }>, sign: 1 | -1, deltas = new Map<string, number>()): Map<string, number> {
    for (const r of records) if (r.domain_rev) deltas.set(r.domain_rev, (deltas.get(r.domain_rev) ?? 0) + sign);
    return deltas;
  }

  /**
   * Ingests records from any (async) iterable, in batches of BATCH_SIZE, each written with its
   * counters and what the ingest hooks raise, and committed (see `transactionMs`). Re-ingesting the
   * same records adds nothing. A failure leaves the committed batches in place and says how far it got.
   */
  async ingest(
    sourceId: string,
    items: AsyncIterable<IngestItem> | Iterable<IngestItem>,
    actor: { p: Principal | null; ip: string | null },
    { onBatch, batchSize = BATCH_SIZE, transactionMs = 0 }: IngestOptions = {},
  ): Promise<IngestReport> {
    const source = await this.getSource(sourceId);
    const report: IngestReport = { accepted: 0, duplicates: 0, rejected: [], alerts_raised: 0, exposures_found: 0 };
    let batch: NormalisedRecord[] = [];
    let processed = 0;
    let processedBytes = 0;
    let committed = 0;
    // Batches start at BATCH_SIZE and double up to batchSize, so a bulk load starts writing early;
    // and one of at least BATCH_SIZE is written as soon as the reader has no more ready (`pause`),
    // so that neither thread waits for the other.
    let limit = Math.min(batchSize, BATCH_SIZE);
    let batchBytes = 0;
    // The open transaction, when it was opened, and what it holds that is not committed yet: the
    // items processed up to its last batch, their input bytes, and its valid records.
    let trx: ControlledTransaction<DB> | null = null;
    let openedAt = 0;
    const written = { processed: 0, bytes: 0, records: 0 };
    // The counter changes of the open transaction's batches, written once as it commits.
    let counts = newTransactionCounts();
    // The report's figures as of the last commit: what a failure reports.
    const figures = () => ({ accepted: report.accepted, duplicates: report.duplicates, alerts_raised: report.alerts_raised, exposures_found: report.exposures_found });
    let atCommit = figures();
    const progressDetail = (n: number) => `Ingestion stopped after ${n} records (${report.accepted} accepted); every record before that is stored. Re-send the rest: duplicates are skipped.`;
    /** What stoppedBy() made: a failure of the ingest itself, not of its items. */
    let stopped: AppError | null = null;
    /** Undoes what the open transaction holds, in the database and in the report, and says how far the ingest got. */
    const stoppedBy = async (err: unknown): Promise<AppError> => {
      if (trx) await trx.rollback().execute().catch(() => undefined);
      trx = null;
      counts = newTransactionCounts();
      Object.assign(report, atCommit);
      stopped = new AppError('unavailable', 503, progressDetail(committed), { body: { ...report, processed: committed } });
      // Logged (with the request id) by the error handler; never shown to the client.
      stopped.cause = err;
      return stopped;
    };
    const commit = async () => {
      if (!trx) return;
      try {
        await this.writeCounts(trx, source, counts);
        await trx.commit().execute();
      } catch (err) {
        throw await stoppedBy(err);
      }
      trx = null;
      counts = newTransactionCounts();
      committed = written.processed;
      atCommit = figures();
      this.deps.metrics.ingested.inc({ outcome: 'processed' }, written.records);
      written.records = 0;
      onBatch?.(report, written.processed, written.bytes);
      // The event loop turns after each commit, so a timer, a signal (Ctrl-C) or another request
      // gets its turn: fed by a reader that keeps ahead, an import never yields otherwise. Once per
      // commit, not per batch: yielding more often made a bulk load's batches smaller and slower.
      await yieldToEventLoop();
    };
    const flush = async () => {
      if (batch.length === 0) return;
      const records = batch;
      batch = [];
      batchBytes = 0;
      try {
        if (!trx) {
          trx = await this.db.startTransaction().execute();
          openedAt = this.deps.clock().getTime();
        }
        await this.storeBatch(trx, source, records, report, counts);
      } catch (err) {
        throw await stoppedBy(err);
      }
      written.processed = processed;
      written.bytes = processedBytes;
      written.records += records.length;
      if (this.deps.clock().getTime() - openedAt >= transactionMs) await commit();
    };
    try {
      for await (const { index, value, result, bytes, pause } of items) {
        processed++;
        processedBytes += bytes ?? 0;
        const r = result ?? recordResult(value);
        if (!r.ok) {
          if (report.rejected.length < MAX_REPORTED_REJECTIONS) report.rejected.push({ index, errors: r.errors });
          else report.rejected_not_listed = (report.rejected_not_listed ?? 0) + 1;
        } else {
          batch.push(r.record);
          batchBytes += bytes ?? 0;
        }
        if (batch.length >= limit || batchBytes >= MAX_BATCH_BYTES || (pause && batch.length >= BATCH_SIZE)) {
          await flush();
          limit = Math.min(batchSize, limit * 2);
        }
      }
      await flush();
    } catch (err) {
      if (err === stopped) throw err;
      // The items failed part-way (a stream cut off or past its limit, a file that cannot be read
      // on): what was read before is stored too, as it would have been had the items ended there,
      // and the error says how far the ingest got (committed below, as every ingest's last batches are).
      await flush();
      const progress: IngestProgress = { ...report, processed };
      if (err instanceof AppError) throw new AppError(err.code, err.status, `${err.detail} ${progressDetail(processed)}`, { ...err.extra, body: { ...err.extra.body, ...progress } });
      throw new IngestCutOff(err, progress);
    } finally {
      // The batches written in the open transaction are kept, as they would have been had each
      // been committed on its own.
      await commit();
    }
    committed = processed;
    onBatch?.(report, processed, processedBytes);
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
    await this.bumpCounters(trx, counts.corpus);
    await this.bumpCounters(trx, counts.domains, 'leak_domain_counts');
    if (counts.records) {
      await trx
        .updateTable('leak_sources')
        .set((eb) => ({ record_count: eb('record_count', '+', counts.records) }))
        .where('id', '=', source.id)
        .execute();
    }
    // A bulk load shows it is alive with each commit (the same connection: in this transaction).
    if (this.beforeBulk) heartbeat(this.sqlite, this.now());
  }

  /** Writes a batch in `trx` with what the ingest hooks raise, adding its counter changes to `counts` (see writeCounts). */
  private async storeBatch(trx: Kysely<DB>, source: SourceRow, records: NormalisedRecord[], report: IngestReport, counts: TransactionCounts) {
    const at = this.now();
    // The records that were new, and their ids: InsertedRecord objects are only built for hooks.
    const inserted: NormalisedRecord[] = [];
    const insertedIds: string[] = [];
    const raw = this.deps.database.sqlite;
    if (raw) {
      // SQLite: one prepared statement run per row inside the open transaction is several times
      // faster than building multi-row inserts; `changes` says whether the row was new. The
      // values are bound straight from the record, in RECORD_COLUMNS order, with no row object.
      const insert = (this.insertStatement ??= raw.prepare(
        `insert into leak_records (${RECORD_COLUMNS.join(', ')}) values (${RECORD_COLUMNS.map(() => '?').join(', ')}) on conflict (fingerprint) do nothing`,
      ));
      for (const r of records) {
        const id = this.deps.newId();
        if (insert.run(recordValues(r, id, source.id, at)).changes > 0) {
          inserted.push(r);
          insertedIds.push(id);
        }
      }
    } else {
      const ids = records.map(() => this.deps.newId());
      const rows = records.map((r, i) => Object.fromEntries(recordValues(r, ids[i] as string, source.id, at).map((v, c) => [RECORD_COLUMNS[c], v])) as Insertable<LeakRecordsTable>);
      const returnedIds = new Set<string>();
      for (let i = 0; i < rows.length; i += 500) {
        const returned = await trx
          .insertInto('leak_records')
          .values(rows.slice(i, i + 500))
          .onConflict((oc) => oc.column('fingerprint').doNothing())
          .returning('id')
          .execute();
        for (const { id } of returned) returnedIds.add(id);
      }
      records.forEach((r, i) => {
        const id = ids[i] as string;
        if (returnedIds.has(id)) {
          inserted.push(r);
          insertedIds.push(id);
        }
      });
      if (inserted.length) await this.addWords(trx, inserted);
    }
    this.counterDeltas(inserted, source.breach_date, 1, counts.corpus);
    this.domainDeltas(inserted, 1, counts.domains);
    counts.records += inserted.length;
    let alerts = 0;
    let exposures = 0;
    const ingestHooks = this.hooks.of('leaks.ingested');
    const forHooks: InsertedRecord[] = ingestHooks.length ? inserted.map((r, i) => ({ ...r, id: insertedIds[i] as string, source_id: source.id })) : [];
    for (const hook of ingestHooks) {
      const r = await hook(trx, forHooks, { id: source.id, name: source.name });
      alerts += r.alerts;
      exposures += r.exposures;
    }
    report.accepted += inserted.length;
    report.duplicates += records.length - inserted.length;
    report.alerts_raised += alerts;
    report.exposures_found += exposures;
  }

  // --- bulk loads (SQLite) ---

  private get sqlite() {
    const raw = this.deps.database.sqlite;
    if (!raw) throw new Error('bulk loads are for the embedded SQLite database');
    return raw;
  }

  /**
   * SQLite: this connection's page cache, for a plain CLI import (importLeaks), made
   * PLAIN_IMPORT_CACHE_KIB; a bulk load sets its own (see beginBulkLoad). Returns what puts it back.
   */
  importPageCache(): () => void {
    const raw = this.deps.database.sqlite;
    if (!raw || this.inBulkLoad) return () => undefined;
    const before = raw.pragma('cache_size', { simple: true }) as number;
    raw.pragma(`cache_size = -${PLAIN_IMPORT_CACHE_KIB}`);
    return () => raw.pragma(`cache_size = ${before}`);
  }

  get supportsBulkLoad(): boolean {
    return this.deps.database.sqlite !== undefined;
  }

  /** Whether this service began a bulk load it has not finished (an import of several files shares one). */
  get inBulkLoad(): boolean {
    return this.beforeBulk !== undefined;
  }

  /**
   * See bulk-load.ts: search indexes set aside until finishBulkLoad(). With them gone, loading is
   * mostly appending, so this connection's page cache shrinks to 16 MiB until the load finishes:
   * the importer's memory stays flat and low. And the write-ahead log is checkpointed into the
   * database once it holds BULK_WAL_PAGES rather than SQLite's 1,000 (4 MiB): the pages that every
   * commit touches again (the key index of the source being loaded, the counters, the table's last
   * pages) are copied into the database once per 256 MiB instead of every few commits.
   */
  beginBulkLoad(): void {
    beginBulkLoad(this.sqlite, this.now());
    this.beforeBulk ??= {
      cacheSize: this.sqlite.pragma('cache_size', { simple: true }) as number,
      walAutocheckpoint: this.sqlite.pragma('wal_autocheckpoint', { simple: true }) as number,
    };
    this.sqlite.pragma('cache_size = -16384');
    this.sqlite.pragma(`wal_autocheckpoint = ${BULK_WAL_PAGES}`);
  }

  /** Rebuilds what a bulk load set aside; false when none was in progress (always on PostgreSQL). */
  finishBulkLoad(onStep?: (step: string, ms: number) => void): boolean {
    const raw = this.deps.database.sqlite;
    if (!raw) return false;
    try {
      return finishBulkLoad(raw, { now: () => this.now(), onStep });
    } finally {
      this.afterBulkLoad(raw);
    }
  }

  /**
   * The end of this process's part in a bulk load (`import-leaks --bulk`): it rebuilds what the
   * load set aside, unless another import is still loading into it, which then rebuilds when it
   * ends (rebuilt by the first to end, the rest of the other would load with every index kept up
   * to date, several times slower). `onRebuild` is called before a rebuild begins, `onStep` after each of its steps.
   */
  endBulkLoad(onStep?: (step: string, ms: number) => void, onRebuild?: () => void): 'rebuilt' | 'left to another import' | 'none' {
    const raw = this.deps.database.sqlite;
    if (!raw) return 'none';
    if (liveBulkLoaders(raw, this.deps.clock().getTime(), BULK_LOAD_ALIVE_MS, true) > 0) {
      leaveBulkLoad(raw);
      this.afterBulkLoad(raw);
      return 'left to another import';
    }
    if (this.inBulkLoad) onRebuild?.();
    return this.finishBulkLoad(onStep) ? 'rebuilt' : 'none';
  }

  /** This connection's settings back as they were before its bulk load (see beginBulkLoad). */
  private afterBulkLoad(raw: NonNullable<AppDeps['database']['sqlite']>) {
    if (this.beforeBulk) {
      raw.pragma(`cache_size = ${this.beforeBulk.cacheSize}`);
      raw.pragma(`wal_autocheckpoint = ${this.beforeBulk.walAutocheckpoint}`);
      // The log is back in the database and the file back to nothing, not left at 256 MiB.
      raw.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.beforeBulk = undefined;
  }

  /**
   * At start-up (`threatmon serve`): finishes a bulk load whose processes are gone (killed, or
   * silent for BULK_LOAD_ALIVE_MS; see liveBulkLoaders), and leaves one in progress to its imports:
   * finishing a live load would make the rest of it load with every index kept up to date.
   */
  finishInterruptedBulkLoad(onStep?: (step: string, ms: number) => void): 'finished' | 'in progress' | 'none' {
    const raw = this.deps.database.sqlite;
    const state = raw ? bulkLoadState(raw, this.deps.clock().getTime(), BULK_LOAD_ALIVE_MS) : 'none';
    if (state !== 'interrupted') return state;
    return this.finishBulkLoad(onStep) ? 'finished' : 'none';
  }

  /**
   * After a large load on PostgreSQL: VACUUM sets the visibility map so searches count and page
   * from index-only scans (freshly written pages send every index entry back to the table), and
   * ANALYZE gives the planner the new distribution. Autovacuum would get there, later.
   */
  async afterLargeLoad(): Promise<void> {
    if (this.deps.database.dialect === 'postgres') await sql`vacuum (analyze) leak_records`.execute(this.db);
  }

  // --- search ---

  private recordsQuery(from: QueryCreator<DB> = this.db) {
    return from
      .selectFrom('leak_records')
      .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
      .select(['leak_records.id', RECORD_JSON[this.deps.database.dialect].as('json')]);
  }

  /**
   * Count, then the page's ids in order, then those records: the first two read the criterion's
   * index with created_at and id in it, without touching a wide row, however many records match.
   * On PostgreSQL the three are one statement (the first branch below, or searchByDomain's): each
   * round trip costs more there than the queries themselves.
   */
  async search(query: ListQuery): Promise<ListResult<string>> {
    assertHasCriterion(query);
    const { page, pageSize } = pageParams(query);
    const ctx: LeakSearchContext = { dialect: this.deps.database.dialect };
    // Every parameter is checked (a bad one is a 400) before anything is read, then prefixes are
    // spelled out (PostgreSQL) and the criteria applied again with them.
    let filtered = leakSearch.filter(this.db.selectFrom('leak_records'), query, ctx);
    const fullText = given(query.q) ? await this.expandPrefixes(parseFullText(String(query.q))) : undefined;
    if (fullText?.some((t) => t.completions)) {
      const expanded: LeakSearchContext = { ...ctx, fullText };
      filtered = leakSearch.filter(this.db.selectFrom('leak_records'), query, expanded);
    }
    // A prefix no word of the index starts with: nothing matches, and there is nothing to run.
    if (fullText?.some((t) => t.completions?.length === 0)) return this.pageOfRows({ count: 0, rows: [] }, page, pageSize);
    const pageOf = (qb: typeof filtered) => leakSearch.order(qb, query).limit(pageSize).offset((page - 1) * pageSize);
    const byDomain = await this.searchByDomain(query, page, pageSize);
    if (byDomain && 'rows' in byDomain) return this.pageOfRows(byDomain, page, pageSize);
    if (!byDomain && this.deps.database.dialect === 'postgres') {
      // Full text counts its matches in the pass that finds them (count(*) over ()); any other
      // criterion counts from its index in a scalar subquery that PostgreSQL runs once.
      const textSearch = given(query.q);
      const ids = pageOf(filtered.select(textSearch ? ['leak_records.id', sql<number>`count(*) over ()`.as('total')] : ['leak_records.id']));
      const total = textSearch ? sql<number>`page.total` : filtered.select((eb) => eb.fn.countAll().as('n'));
      const rows = (await leakSearch
        .order(this.recordsQuery().innerJoin(ids.as('page'), 'page.id', 'leak_records.id').select(total.as('total')), query)
        .execute()) as Array<RecordRow & { total: number }>;
      return this.pageOfRows({ count: rows.length ? Number(rows[0]?.total) : 0, rows }, page, pageSize);
    }
    let count: number;
    let ids: string[];
    if (byDomain) {
      ({ count, ids } = byDomain);
    } else if (given(query.q)) {
      // Full text: matching is the cost, so match once and count the matches in the same pass
      // (count(*) over ()). An empty page past the first is past the end: 404 either way.
      const rows = (await pageOf(filtered.select(['leak_records.id', sql<number>`count(*) over ()`.as('total')])).execute()) as Array<{ id: string; total: number }>;
      if (rows.length === 0 && page > 1) throw invalidPage();
      count = rows.length ? Number(rows[0]?.total) : 0;
      ids = rows.map((r) => r.id);
    } else {
      const counted = await filtered.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
      count = Number(counted?.n ?? 0);
      ids = (await pageOf(filtered.select('leak_records.id')).execute()).map((r) => (r as { id: string }).id);
    }
    const rows = ids.length ? ((await this.recordsQuery().where('leak_records.id', 'in', ids).execute()) as RecordRow[]) : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return listResult(
      count,
      page,
      pageSize,
      ids.flatMap((id) => {
        const r = byId.get(id);
        return r ? [r.json] : [];
      }),
    );
  }

  /**
   * PostgreSQL: each prefix term (`jam*`) with the words of the records that start with it (james,
   * jamie), from leak_words: GIN gathers every word of a prefix into a bitmap of its own before it
   * intersects, so the words spelled out intersect several times faster. A prefix of more than MAX_PREFIX_COMPLETIONS words, or of other than a-z and 0-9 (which the
   * database may fold otherwise than JavaScript), runs as a prefix. SQLite gains nothing from this
   * (its FTS5 index lists its words only by reading their postings, as the prefix does): the
   * terms stay as they are.
   */
  async expandPrefixes(terms: FullTextTerm[]): Promise<FullTextTerm[]> {
    if (this.deps.database.dialect !== 'postgres') return terms;
    return Promise.all(
      terms.map(async (t) => {
        const last = t.words.at(-1) as string;
        if (t.kind !== 'prefix' || !/^[a-z0-9]+$/.test(last)) return t;
        const rows = await this.db
          .selectFrom('leak_words')
          .select('word')
          .where('word', '>=', last)
          .where('word', '<', prefixEnd(last) as string)
          .orderBy('word')
          .limit(MAX_PREFIX_COMPLETIONS + 1)
          .execute();
        const words = rows.map((r) => r.word);
        if (words.length > MAX_PREFIX_COMPLETIONS || !words.every((w) => /^[\p{L}\p{N}]+$/u.test(w))) return t;
        return { ...t, completions: words };
      }),
    );
  }

  /** A page of records already in order; an empty page past the first is past the end (404). */
  private pageOfRows(found: { count: number; rows: RecordRow[] }, page: number, pageSize: number): ListResult<string> {
    if (found.rows.length === 0 && page > 1) throw invalidPage();
    return listResult(found.count, page, pageSize, found.rows.map((r) => r.json));
  }

  /**
   * A search by domain alone, in created_at order: the count is a sum over leak_domain_counts, and
   * the page is merged from each matching domain's own (domain_rev, created_at, id) index range, read
   * in order and no further than the page. Without this, a domain holding a large share of the
   * corpus (a webmail) means counting and sorting all its records for each page. Null when the
   * search is not of that shape, or spans more domains than are worth merging. On PostgreSQL the
   * merge and the records are one statement (a lateral scan per domain), on SQLite a query each.
   */
  private async searchByDomain(query: ListQuery, page: number, pageSize: number): Promise<{ count: number; ids: string[] } | { count: number; rows: RecordRow[] } | null> {
    const ordering = query.ordering ?? '-created_at';
    if (ordering !== 'created_at' && ordering !== '-created_at') return null;
    if (!onlyParams(query, DOMAIN_SEARCH_PARAMS) || !given(query.domain)) return null;
    const { from, end } = domainRange(query.domain, query);
    let keysQuery = this.db.selectFrom('leak_domain_counts').select(['key', 'n']).where('n', '>', 0);
    keysQuery = end === null ? keysQuery.where('key', '=', from) : keysQuery.where('key', '>=', from).where('key', '<', end);
    keysQuery = keysQuery.limit(MAX_MERGED_DOMAINS + 1);
    const direction = ordering === 'created_at' ? 'asc' : 'desc';
    const wanted = page * pageSize;
    if (this.deps.database.dialect === 'postgres') {
      // One statement: the matching domains, their total, and the page merged from one lateral
      // index scan per domain, joined to its records. No row: no such domain, or a page past the
      // end (404 either way, as page 1 of a domain with records is never empty).
      const dir = sql.raw(direction);
      const ids = sql<{ id: string }>`(select p.id from keys
        cross join lateral (select id, created_at from leak_records where domain_rev = keys.key order by created_at ${dir}, id ${dir} limit ${wanted}) as p
        order by p.created_at ${dir}, p.id ${dir} limit ${pageSize} offset ${(page - 1) * pageSize})`;
      const totals = sql<{ total: number; domains: number }>`(select coalesce(sum(n), 0) as total, count(*) as domains from keys)`;
      const rows = (await this.recordsQuery(this.db.with('keys', () => keysQuery) as unknown as QueryCreator<DB>)
        .innerJoin(ids.as('page'), 'page.id', 'leak_records.id')
        .innerJoin(totals.as('totals'), (join) => join.onTrue())
        .select(['totals.total', 'totals.domains'])
        .orderBy('leak_records.created_at', direction)
        .orderBy('leak_records.id', direction)
        .execute()) as Array<RecordRow & { total: number; domains: number }>;
      if (rows.length && Number(rows[0]?.domains) > MAX_MERGED_DOMAINS) return null;
      return { count: rows.length ? Number(rows[0]?.total) : 0, rows };
    }
    const keys = await keysQuery.execute();
    if (keys.length > MAX_MERGED_DOMAINS) return null;
    const count = keys.reduce((sum, k) => sum + Number(k.n), 0);
    const rows: Array<{ id: string; created_at: string }> = [];
    for (const { key } of keys) {
      rows.push(
        ...(await this.db
          .selectFrom('leak_records')
          .select(['id', 'created_at'])
          .where('domain_rev', '=', key)
          .orderBy('created_at', direction)
          .orderBy('id', direction)
          .limit(wanted)
          .execute()),
      );
    }
    const sign = direction === 'asc' ? 1 : -1;
    rows.sort((a, b) => sign * (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { count, ids: rows.slice((page - 1) * pageSize, wanted).map((r) => r.id) };
  }

  /** One record's JSON text (see RECORD_JSON). */
  async getRecord(id: string): Promise<string> {
    const row = (await this.recordsQuery().where('leak_records.id', '=', id).executeTakeFirst()) as RecordRow | undefined;
    if (!row) throw notFound('No such leak record.');
    return row.json;
  }

  /**
   * Have I Been Pwned range format: `SUFFIX:COUNT` lines for every password SHA-1 starting with
   * `prefix`, in suffix order. `pad` (the Add-Padding request header): random suffixes with count 0
   * are mixed in, in order, until the answer holds between PADDED_MIN and PADDED_MAX lines, so that
   * its size does not tell an observer of the encrypted traffic how many hashes share the prefix.
   */
  async passwordRange(prefix: string, pad = false): Promise<string> {
    const upper = prefix.toUpperCase();
    const next = (parseInt(upper, 16) + 1).toString(16).toUpperCase().padStart(5, '0');
    let q = this.db
      .selectFrom('leak_records')
      .select(['password_sha1', (eb) => eb.fn.countAll().as('n')])
      .where('password_sha1', '>=', upper);
    if (upper !== 'FFFFF') q = q.where('password_sha1', '<', next);
    const rows = await q.groupBy('password_sha1').orderBy('password_sha1').execute();
    const counts = new Map(rows.map((r) => [(r.password_sha1 as string).slice(5), Number(r.n)]));
    const lines = (suffixes: Iterable<string>) => Array.from(suffixes, (s) => `${s}:${counts.get(s) ?? 0}`).join('\r\n');
    if (!pad) return lines(counts.keys());
    const suffixes = new Set(counts.keys());
    const wanted = randomInt(PADDED_MIN, PADDED_MAX + 1);
    while (suffixes.size < wanted) suffixes.add(randomBytes(18).toString('hex').slice(0, 35).toUpperCase());
    return lines([...suffixes].sort());
  }

  /** For the password policy: whether this password's SHA-1 is in the corpus. */
  async isBreached(password: string, db: Kysely<DB> = this.db): Promise<boolean> {
    const row = await db.selectFrom('leak_records').select('id').where('password_sha1', '=', sha1Hex(password)).limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async stats(p: Principal) {
    const counters = new Map((await this.db.selectFrom('leak_counters').selectAll().execute()).map((c) => [c.key, Number(c.n)]));
    const totalSources = await this.db.selectFrom('leak_sources').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const top = await this.db.selectFrom('leak_sources').select(['id', 'name', 'record_count']).orderBy('record_count', 'desc').orderBy('id').limit(10).execute();
    const latest = await this.db.selectFrom('leak_sources').select(['id', 'name', 'breach_date', 'created_at']).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    const now = this.deps.clock();
    const months: string[] = [];
    for (let i = 23; i >= 0; i--) {
      const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
      months.push(d.toISOString().slice(0, 7));
    }
    const orgFigures = this.hooks.of('leaks.organizationFigures')[0];
    const org = orgFigures ? await orgFigures(this.db, p.organization.id) : { monitors: 0, alerts_open: 0, alerts_last_30_days: 0 };
    return {
      total_records: counters.get('total') ?? 0,
      total_sources: Number(totalSources.n),
      records_with_password: counters.get('with_password') ?? 0,
      by_data_class: Object.fromEntries(DATA_CLASSES.map((c) => [c, counters.get(`class:${c}`) ?? 0])),
      top_sources: top.map((s) => ({ id: s.id, name: s.name, record_count: Number(s.record_count) })),
      by_month: months.map((month) => ({ month, records: counters.get(`month:${month}`) ?? 0 })),
      latest_source: latest ?? null,
      organization: org,
    };
  }

  // --- saved searches ---

  presentSaved(r: Selectable<DB['saved_searches']>) {
    return {
      id: r.id,
      name: r.name,
      query: JSON.parse(r.query) as Record<string, unknown>,
      created_by: r.created_by,
      created_at: r.created_at,
      updated_at: r.updated_at,
      last_run_at: r.last_run_at,
      last_result_count: r.last_result_count,
    };
  }

  /** Saved queries must be runnable: the same validation as a search. */
  private validateSaved(query: Record<string, unknown>) {
    assertHasCriterion(query);
    leakSearch.filter(this.recordsQuery(), query, { dialect: this.deps.database.dialect });
    leakSearch.order(this.recordsQuery(), query);
  }

  listSaved(p: Principal, query: ListQuery) {
    const qb = savedSearchListing.filter(this.db.selectFrom('saved_searches').selectAll().where('organization_id', '=', p.organization.id), query, { dialect: this.deps.database.dialect });
    return savedSearchListing.page(qb, query, (r: Selectable<DB['saved_searches']>) => this.presentSaved(r));
  }

  async getSaved(p: Principal, id: string, db: Kysely<DB> = this.db) {
    const row = await db.selectFrom('saved_searches').selectAll().where('id', '=', id).where('organization_id', '=', p.organization.id).executeTakeFirst();
    if (!row) throw notFound('No such saved search.');
    return row;
  }

  async createSaved(actor: { p: Principal; ip: string }, body: { name: string; query: Record<string, unknown> }) {
    this.validateSaved(body.query);
    return this.db.transaction().execute(async (trx) => {
      const at = this.now();
      const row = {
        id: this.deps.newId(),
        organization_id: actor.p.organization.id,
        name: body.name,
        query: JSON.stringify(body.query),
        created_by: actor.p.user.id,
        created_at: at,
        updated_at: at,
        last_run_at: null,
        last_result_count: null,
      };
      await trx.insertInto('saved_searches').values(row).execute();
      await this.audit.recordAs(trx, actor, { action: 'saved_search.created', targetType: 'saved_search', targetId: row.id, changes: { name: row.name, query: body.query } });
      return this.getSaved(actor.p, row.id, trx);
    });
  }

  async updateSaved(actor: { p: Principal; ip: string }, id: string, patch: { name?: string; query?: Record<string, unknown> }, assertVersion: (v: number) => void) {
    if (patch.query) this.validateSaved(patch.query);
    return this.db.transaction().execute(async (trx) => {
      const current = await this.getSaved(actor.p, id, trx);
      assertVersion(current.version);
      const changes = diff(this.presentSaved(current) as unknown as Record<string, unknown>, patch);
      if (Object.keys(changes).length === 0) return current;
      await trx
        .updateTable('saved_searches')
        .set((eb) => ({
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.query !== undefined && { query: JSON.stringify(patch.query) }),
          updated_at: this.now(),
          version: eb('version', '+', 1),
        }))
        .where('id', '=', id)
        .execute();
      await this.audit.recordAs(trx, actor, { action: 'saved_search.updated', targetType: 'saved_search', targetId: id, changes });
      return this.getSaved(actor.p, id, trx);
    });
  }

  async deleteSaved(actor: { p: Principal; ip: string }, id: string) {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.getSaved(actor.p, id, trx);
      await trx.deleteFrom('saved_searches').where('id', '=', id).execute();
      await this.audit.recordAs(trx, actor, { action: 'saved_search.deleted', targetType: 'saved_search', targetId: id, changes: { name: current.name } });
    });
  }

  /** Runs a saved search (page and page_size from the request) and records when and how many. */
  async runSaved(p: Principal, id: string, paging: { page?: number; page_size?: number }) {
    const saved = await this.getSaved(p, id);
    const page = await this.search({ ...(JSON.parse(saved.query) as ListQuery), ...paging });
    await this.db
      .updateTable('saved_searches')
      .set({ last_run_at: this.now(), last_result_count: page.count })
      .where('id', '=', id)
      .execute();
    return page;
  }
}

