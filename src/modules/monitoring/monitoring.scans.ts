import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { type JobLog, JobLoop } from '../../runtime/jobs.js';
import { domainKeyRange, ipKeyRange, type RecordSeverity } from '../../domain/leak-record.js';
import { notFound } from '../../http/errors.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { Principal } from '../identity/index.js';
import type { Outbox } from '../events/index.js';
import { type Match, type MatchedRecord, MonitorIndex } from './monitoring.matcher.js';
import type { MonitoringRepository } from './monitoring.repository.js';
import type { ScanOut } from './monitoring.schemas.js';
import { scanListing } from './monitoring.lists.js';
import type { CandidateRow, KeyRange, ScanRow, ScansRepository } from './monitoring.scans.repository.js';
import { presentScan } from './monitoring.presenters.js';

/** Where a scan goes on from: the term it is at, and the last record it read of that term's range. */
interface Cursor {
  term: number;
  after: string[] | null;
}

/** A scan's runner lost its lease: another process took the scan over after it stalled. */
class LeaseLost extends Error {}

/** The index ranges holding the records a term of an exact type can match (null for keywords: those read every record). */
export function termRanges(type: string, terms: readonly string[]): KeyRange[] | null {
  switch (type) {
    case 'email':
      return terms.map((t) => ({ column: 'email', from: t, to: t }));
    case 'username':
      return terms.map((t) => ({ column: 'username_lower', from: t, to: t }));
    case 'domain':
      // The domain and its subdomains, as the record's domain or (where it differs) its e-mail's, as
      // the matcher reads them. The e-mail ranges come after: a scan's cursor counts ranges, and one
      // saved before they existed goes on where it was.
      return [...terms.map((t) => ({ column: 'domain_rev' as const, ...domainKeyRange(t) })), ...terms.map((t) => ({ column: 'email_domain_rev' as const, ...domainKeyRange(t) }))];
    case 'ip':
      return terms.map((t) => {
        const [from, to] = ipKeyRange(t) as [string, string];
        return { column: 'ip_key', from, to };
      });
    default:
      return null;
  }
}

const asRecord = (r: CandidateRow): MatchedRecord => ({ ...r, extra: JSON.parse(r.extra) as Record<string, string>, severity: r.severity as RecordSeverity });

export interface ScanOptions {
  /** Records read per transaction. */
  chunk?: number;
  /** How long a runner holds a scan without committing a chunk before another may take it over. */
  leaseMs?: number;
}

/**
 * Scans of the leak corpus for one monitor: durable jobs in monitor_scans. A scan reads, chunk by
 * chunk, the records its terms can match (index ranges for exact types, the corpus in id order for
 * keywords, which are found inside words as at ingest), matches them with the ingest matcher, and
 * commits each chunk's alerts with its cursor: stopped anywhere, it goes on from its last chunk.
 * Reads happen outside the write transactions, which stay one chunk long.
 */
export class MonitorScans {
  private readonly owner = randomUUID();
  private readonly chunk: number;
  private readonly leaseMs: number;
  // The scan keeps its cursor when a turn fails: its lease runs out and a later turn goes on with it.
  private readonly loop = new JobLoop(() => this.runPending(), 'monitor scan failed; it will be resumed', { pollMs: 1000 });

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId'>,
    private readonly repo: ScansRepository,
    private readonly monitors: MonitoringRepository,
    private readonly outbox: Outbox,
    private readonly writeAlerts: (trx: Kysely<DB>, matches: Match[]) => Promise<number>,
    options: ScanOptions = {},
  ) {
    this.chunk = options.chunk ?? 2000;
    this.leaseMs = options.leaseMs ?? 60_000;
  }

  private get db() {
    return this.deps.database.db;
  }

  private later(ms: number) {
    return new Date(this.deps.clock().getTime() + ms).toISOString();
  }

  /**
   * Queues a scan of the monitor in the caller's transaction; a scan already queued for it is
   * answered instead (it will read the corpus as it is when it starts).
   */
  async request(trx: Kysely<DB>, monitor: { id: string; organization_id: string }, reason: 'created' | 'requested'): Promise<ScanRow> {
    const queued = await this.repo.queuedFor(trx, monitor.id);
    if (queued) return queued;
    const row = {
      id: this.deps.newId(),
      organization_id: monitor.organization_id,
      monitor_id: monitor.id,
      reason,
      status: 'queued',
      terms: null,
      cursor: null,
      lease_owner: null,
      lease_until: null,
      created_at: this.deps.clock().toISOString(),
      started_at: null,
      finished_at: null,
    };
    await this.repo.insert(trx, row);
    return { ...row, records_scanned: 0, alerts_raised: 0 };
  }

  list(p: Principal, monitorId: string, params: ListParams): Promise<ListResult<ScanOut>> {
    const qb = scanListing.filter(this.repo.selectScans(this.db, p.organization.id, monitorId), params, { dialect: this.deps.database.dialect });
    return scanListing.page(qb, params, presentScan);
  }

  async get(p: Principal, monitorId: string, id: string): Promise<ScanRow> {
    const row = await this.repo.find(this.db, p.organization.id, monitorId, id);
    if (!row) throw notFound('No such scan.');
    return row;
  }

  /**
   * Takes one scan (a stalled one first, else the oldest queued) and runs it to its end, or for
   * `maxChunks` chunks. False when there was none to take.
   */
  async runNext(options: { maxChunks?: number } = {}): Promise<boolean> {
    const scan = await this.repo.claim(this.db, this.owner, this.deps.clock().toISOString(), this.later(this.leaseMs));
    if (!scan) return false;
    const monitor = await this.monitors.monitorById(this.db, scan.monitor_id);
    if (!monitor) return true;
    const terms = JSON.parse(scan.terms ?? monitor.terms) as string[];
    const index = new MonitorIndex([{ ...monitor, terms }]);
    const ranges = termRanges(monitor.type, terms);
    let cursor: Cursor = scan.cursor ? (JSON.parse(scan.cursor) as Cursor) : { term: 0, after: null };
    try {
      for (let chunks = 0; ; chunks++) {
        if (this.loop.stopping || (options.maxChunks !== undefined && chunks >= options.maxChunks)) {
          if (this.loop.stopping) await this.repo.release(this.db, scan.id, this.owner, this.deps.clock().toISOString());
          return true;
        }
        const { rows, next, done } = ranges ? await this.readRanges(ranges, cursor) : await this.readAll(cursor);
        const matches = index.match(rows.map(asRecord));
        await this.db.transaction().execute(async (trx) => {
          const alerts = await this.writeAlerts(trx, matches);
          const held = await this.repo.advance(trx, scan.id, this.owner, { cursor: JSON.stringify(next), scanned: rows.length, alerts, leaseUntil: this.later(this.leaseMs) });
          if (!held) throw new LeaseLost();
          if (done) {
            const finished = await this.repo.complete(trx, scan.id, this.owner, this.deps.clock().toISOString());
            if (finished) await this.outbox.record(trx, [{ organizationId: finished.organization_id, type: 'monitor.scan_completed', data: presentScan(finished) }]);
          }
        });
        if (done) return true;
        cursor = next;
        // One chunk at a time: requests waiting for the database go first.
        await yieldToEventLoop();
      }
    } catch (err) {
      if (err instanceof LeaseLost) return true;
      throw err;
    }
  }

  /** Runs scans until none is left to take; how many it ran. */
  async runPending(): Promise<number> {
    let n = 0;
    while (await this.runNext()) n++;
    return n;
  }

  /** Up to one chunk of records from the terms' index ranges, term after term. */
  private async readRanges(ranges: KeyRange[], from: Cursor): Promise<{ rows: CandidateRow[]; next: Cursor; done: boolean }> {
    const rows: CandidateRow[] = [];
    let c = from;
    while (rows.length < this.chunk && c.term < ranges.length) {
      const want = this.chunk - rows.length;
      const got = await this.repo.byKey(this.db, ranges[c.term] as KeyRange, c.after as [string, string, string] | null, want);
      rows.push(...got);
      const last = got.at(-1);
      c = got.length < want || !last ? { term: c.term + 1, after: null } : { term: c.term, after: [last.key as string, last.created_at, last.id] };
    }
    return { rows, next: c, done: c.term >= ranges.length };
  }

  /** The next chunk of the whole corpus, in id order (keywords). */
  private async readAll(from: Cursor): Promise<{ rows: CandidateRow[]; next: Cursor; done: boolean }> {
    const rows = await this.repo.byId(this.db, from.after?.[0] ?? null, this.chunk);
    const last = rows.at(-1);
    return { rows, next: { term: 0, after: last ? [last.id] : from.after }, done: rows.length < this.chunk };
  }

  /** Runs queued scans in the background: now, every second, and whenever `wake()` is called. */
  start(log: JobLog): void {
    this.loop.start(log);
  }

  wake(): void {
    this.loop.wake();
  }

  /** Stops after the chunk in progress, letting go of its scan so that any process can go on with it. */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}
