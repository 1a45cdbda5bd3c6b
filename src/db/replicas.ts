import { AsyncLocalStorage } from 'node:async_hooks';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { serverErrorCode } from './pg-errors.js';
import type { DB } from './schema.js';

/** Where ReadReplicas says a replica went down or came back (the app's logger once it is built). */
export interface ReplicaLog {
  warn: (obj: object, msg: string) => void;
  info: (obj: object, msg: string) => void;
}

export interface ReplicaState {
  /** host:port/database, without credentials: for logs and metrics. */
  readonly name: string;
  /** Reachable, in recovery (a standby), and at most maxLagMs behind. */
  healthy: boolean;
  /** Seconds behind the primary at the last check (0 when it had replayed all the primary had written); null when unreachable. */
  lagSeconds: number | null;
  /** The primary's write-ahead log position this replica had replayed at the last check. */
  replayedLsn: bigint;
}

/** A PostgreSQL log position ('16/B374D848') as a number. */
export function lsnValue(lsn: string | null | undefined): bigint {
  const m = /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(lsn ?? '');
  return m ? (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`) : 0n;
}

/** Errors after which a read is run again on the primary: the replica, not the query, failed. */
function replicaFailed(err: unknown): boolean {
  const code = serverErrorCode(err);
  // No error from the server: the connection failed. From the server: classes 08 connection, 57
  // operator intervention (shut down, conflict with recovery), 53 resources, 58 system, 40 (a
  // standby cancels a read that conflicts with what it replays), or no SQLSTATE at all.
  return code === null || code === '' || /^(08|57|53|58|40|XX)/.test(code);
}

export function replicaName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/**
 * PostgreSQL read replicas (THREATMON_DATABASE_READ_URLS): the reads that can be a little behind
 * (leak searches, statistics, saved-search runs) run on a healthy replica, in turn; the rest on the
 * primary. Each replica is checked every `checkMs`: down, not a standby, or more than `maxLagMs`
 * behind, it is skipped until a check finds it well again (a warning when it goes, a line when it
 * is back). A read that fails because its replica did is run again on the primary.
 *
 * Reads go where `scope` says: Kysely takes a connection from the pool of the replica chosen for
 * the scope it runs in (see routingPool), so repositories write their queries once.
 */
export class ReadReplicas {
  readonly states: ReplicaState[];
  /** The replica a read in progress was given (see routingPool). */
  readonly scope = new AsyncLocalStorage<number>();
  log: ReplicaLog = {
    warn: (obj, msg) => process.stderr.write(`${JSON.stringify({ level: 'warn', ...obj, msg })}\n`),
    info: () => undefined,
  };
  /** A replica further behind is skipped (THREATMON_REPLICA_MAX_LAG). */
  maxLagMs: number;
  private next = 0;
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;

  constructor(
    private readonly primary: Kysely<DB>,
    readonly pools: pg.Pool[],
    names: string[],
    private readonly options: { maxLagMs: number; checkMs: number },
  ) {
    this.maxLagMs = options.maxLagMs;
    this.states = names.map((name) => ({ name, healthy: false, lagSeconds: null, replayedLsn: 0n }));
  }

  /** Checks now, then every checkMs (0: only when check() is called, as tests do). */
  start(): Promise<void> {
    if (this.options.checkMs > 0 && !this.timer) {
      this.timer = setInterval(() => void this.check(), this.options.checkMs);
      this.timer.unref();
    }
    return this.check();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round of checks (one at a time: a round still running is waited for). */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    let primaryLsn = 0n;
    try {
      primaryLsn = await this.primaryLsn();
    } catch {
      // The primary is down: the replicas are judged by their replay time alone.
    }
    await Promise.all(this.pools.map((pool, i) => this.checkOne(pool, this.states[i] as ReplicaState, primaryLsn)));
  }

  private async checkOne(pool: pg.Pool, state: ReplicaState, primaryLsn: bigint): Promise<void> {
    let problem: string | null = null;
    try {
      // A client of its own, not pool.query(): that passes a callback, which the clients'
      // query wrapper (see database.ts) does not take.
      const client = await pool.connect();
      let rows: Array<{ standby: boolean; lsn: string | null; behind: number | null }>;
      try {
        ({ rows } = await client.query<{ standby: boolean; lsn: string | null; behind: number | null }>(
          `select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn,
             extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as behind`,
        ));
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      client.release();
      const row = rows[0];
      if (!row?.standby) {
        problem = 'not a standby (promoted?)';
      } else {
        state.replayedLsn = lsnValue(row.lsn);
        // Replayed all the primary had written when the round began: not behind, however long
        // ago the last transaction was (an idle primary writes none).
        state.lagSeconds = state.replayedLsn >= primaryLsn ? 0 : Math.max(0, Number(row.behind ?? Infinity));
        if (state.lagSeconds * 1000 > this.maxLagMs) problem = `${state.lagSeconds.toFixed(1)} s behind the primary`;
      }
    } catch (err) {
      state.lagSeconds = null;
      problem = `unreachable: ${(err as Error).message}`;
    }
    this.mark(state, problem);
  }

  private mark(state: ReplicaState, problem: string | null): void {
    if (problem && state.healthy) this.log.warn({ replica: state.name, problem }, 'read replica skipped: reads go to the other replicas or the primary until it recovers');
    if (!problem && !state.healthy) this.log.info({ replica: state.name }, 'read replica in use');
    state.healthy = !problem;
  }

  /**
   * Runs `read` on a healthy replica that has replayed `minLsn` (the caller's last write, see
   * leaks' own-write positions), in turn; on the primary when there is none, or when the replica
   * fails during the read (it is skipped until a check finds it well).
   */
  async read<T>(read: () => Promise<T>, minLsn = 0n): Promise<T> {
    const n = this.states.length;
    for (let k = 0; k < n; k++) {
      const i = (this.next + k) % n;
      const state = this.states[i] as ReplicaState;
      if (!state.healthy || state.replayedLsn < minLsn) continue;
      this.next = (i + 1) % n;
      try {
        return await this.scope.run(i, read);
      } catch (err) {
        if (!replicaFailed(err)) throw err;
        this.mark(state, `failed during a read: ${(err as Error).message}`);
      }
    }
    return read();
  }

  /** The primary's write-ahead log position now: a read that must see what was just written waits for it (see read). */
  async primaryLsn(): Promise<bigint> {
    return lsnValue((await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(this.primary)).rows[0]?.lsn);
  }

  async close(): Promise<void> {
    this.stop();
    await Promise.all(this.pools.map((p) => p.end()));
  }
}
