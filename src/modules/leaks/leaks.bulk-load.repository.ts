import os from 'node:os';
import type SQLite from 'better-sqlite3';
import { isBusy, toWal } from '../../db/database.js';

/**
 * Bulk loads on SQLite. Maintaining nine search structures with random keys (e-mail, username,
 * phone, domain, e-mail domain, IP, SHA-1, source, full text) costs most of an insert once the corpus outgrows
 * the page cache. A bulk load drops those indexes and the full-text insert trigger (even skipped,
 * its WHEN test costs every row a fifth of its insert), loads, then builds each index in one sorted
 * pass. The primary key and the uniqueness of record keys (see recordKey) stay, so duplicates are
 * still skipped as records arrive. The state lives in the database
 * (leak_bulk_loads, migration 0004), so a load that was killed is finished by the next one or by
 * `threatmon serve` at start-up. Searches stay correct meanwhile, only slower, and full-text search
 * finds the new records once the load finishes.
 */

interface BulkLoadRow {
  from_rowid: number;
  /** JSON: what was set aside (see setAside). The column's name predates the trigger in it. */
  dropped_indexes: string;
}

/** The full-text insert trigger: set aside with the indexes, put back in the transaction that indexes the load. */
const FTS_INSERT_TRIGGER = 'leak_records_fts_insert';

/**
 * What a bulk load sets aside: the explicit indexes of leak_records (not the primary key's or the
 * uniqueness constraint's, whose `sql` is null) and the full-text insert trigger.
 */
function setAside(raw: SQLite.Database): Array<{ type: 'index' | 'trigger'; name: string; sql: string }> {
  return raw
    .prepare(
      `select type, name, sql from sqlite_master where tbl_name = 'leak_records' and sql is not null
         and (type = 'index' or (type = 'trigger' and name = '${FTS_INSERT_TRIGGER}')) order by type, name`,
    )
    .all() as Array<{ type: 'index' | 'trigger'; name: string; sql: string }>;
}

/** FTS5's own default for `hashsize`, in bytes. */
const FTS5_DEFAULT_HASHSIZE = 1024 * 1024;
/** `hashsize` while a bulk load's records are indexed: faster full text, within the import's memory target (larger went past it). */
const LOAD_FTS_HASHSIZE = 32 * 1024 * 1024;

/** FTS5 takes configuration values written into the statement, not as parameters. */
function setFtsHashSize(raw: SQLite.Database, bytes: number) {
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new Error(`bad FTS5 hashsize ${bytes}`);
  raw.exec(`insert into leak_records_fts (leak_records_fts, rank) values ('hashsize', ${bytes})`);
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** How long the write-ahead log is asked back for, while another connection holds the database. */
const BACK_TO_WAL_MS = 60_000;

/**
 * Runs `fn` with a rollback journal instead of the write-ahead log when this is the only connection
 * to the database, else (or for an in-memory database) as it is: the pages an index build writes
 * are new, and the log would write each twice. The log is back before this returns, whatever `fn`
 * did; a process opening the database meanwhile puts it back itself (openSqlite, waiting up to
 * WAL_WAIT_MS), and the rest of the rebuild runs in the log. Only the rebuild leaves the log, not
 * the load: a load holds a transaction nearly all the time, and a server starting meanwhile could
 * not have put the log back (see the bulk-load tests).
 */
function withRollbackJournal<T>(raw: SQLite.Database, fn: () => T): T {
  if (raw.pragma('journal_mode', { simple: true }) !== 'wal') return fn();
  let left = false;
  try {
    left = raw.pragma('journal_mode = TRUNCATE', { simple: true }) === 'truncate';
  } catch (err) {
    if (!isBusy(err)) throw err;
  }
  try {
    return fn();
  } finally {
    if (left) toWal(raw, BACK_TO_WAL_MS);
  }
}

/** Starts a bulk load, or joins the one in progress (another import, or one that was interrupted). */
export function beginBulkLoad(raw: SQLite.Database, now: string): void {
  raw
    .transaction(() => {
      if (!raw.prepare('select 1 from leak_bulk_loads').get()) {
        const { max } = raw.prepare('select coalesce(max(rowid), 0) as max from leak_records').get() as { max: number };
        const objects = setAside(raw);
        raw.prepare('insert into leak_bulk_loads (id, from_rowid, dropped_indexes, started_at) values (1, ?, ?, ?)').run(max, JSON.stringify(objects), now);
        for (const { type, name } of objects) raw.exec(`drop ${type} ${quoted(name)}`);
      }
      takePart(raw, now);
    })
    .immediate();
}

/** This process, as leak_bulk_load_processes (migration 0011) names the processes taking part in a bulk load. */
const THIS_PROCESS = { host: os.hostname(), pid: process.pid };

/** This process, as a process taking part in the bulk load, alive as of `now`. */
function takePart(raw: SQLite.Database, now: string): void {
  raw
    .prepare('insert into leak_bulk_load_processes (host, pid, heartbeat_at) values (?, ?, ?) on conflict (host, pid) do update set heartbeat_at = excluded.heartbeat_at')
    .run(THIS_PROCESS.host, THIS_PROCESS.pid, now);
}

/** Records that this process, taking part in the bulk load, is alive: in its open transaction if it has one. */
export function heartbeat(raw: SQLite.Database, now: string): void {
  raw.prepare('update leak_bulk_load_processes set heartbeat_at = ? where host = ? and pid = ?').run(now, THIS_PROCESS.host, THIS_PROCESS.pid);
}

/** This process no longer takes part in the bulk load (another import that is still loading will end it). */
export function leaveBulkLoad(raw: SQLite.Database): void {
  raw.prepare('delete from leak_bulk_load_processes where host = ? and pid = ?').run(THIS_PROCESS.host, THIS_PROCESS.pid);
}

/**
 * The processes taking part in the bulk load that are still alive (`others`: this one left out):
 * each showed it was alive within `aliveMs` of `nowMs` and, when it runs on this host, still exists
 * (an import stopped with Ctrl-C is seen at once, not `aliveMs` later).
 */
export function liveBulkLoaders(raw: SQLite.Database, nowMs: number, aliveMs: number, others = false): number {
  const rows = raw.prepare('select host, pid, heartbeat_at from leak_bulk_load_processes').all() as Array<{ host: string; pid: number; heartbeat_at: string }>;
  return rows.filter((r) => {
    if (others && r.host === THIS_PROCESS.host && r.pid === THIS_PROCESS.pid) return false;
    if (nowMs - Date.parse(r.heartbeat_at) >= aliveMs) return false;
    return r.host !== THIS_PROCESS.host || processExists(r.pid);
  }).length;
}

/** Whether a bulk load is in progress with a process still running it, or was interrupted (see liveBulkLoaders). */
export function bulkLoadState(raw: SQLite.Database, nowMs: number, aliveMs: number): 'none' | 'in progress' | 'interrupted' {
  if (!raw.prepare('select 1 from leak_bulk_loads').get()) return 'none';
  return liveBulkLoaders(raw, nowMs, aliveMs) > 0 ? 'in progress' : 'interrupted';
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Rebuilds what a bulk load set aside: each dropped index (one sorted pass each), then the
 * full-text entries of the records loaded meanwhile, the full-text insert trigger and the end of the
 * load, in one transaction; with a rollback journal when nothing else has the database open (see
 * withRollbackJournal). Returns false when no bulk load was in progress.
 */
export function finishBulkLoad(raw: SQLite.Database, opts: RebuildOptions): boolean {
  const load = raw.prepare('select from_rowid, dropped_indexes from leak_bulk_loads').get() as BulkLoadRow | undefined;
  if (!load) return false;
  // Taking part while it rebuilds: a server starting meanwhile leaves the load to this process.
  takePart(raw, opts.now());
  withRollbackJournal(raw, () => rebuild(raw, load, opts));
  return true;
}

export interface RebuildOptions {
  /** The time now, as stored: the rebuild shows it is alive after each step (heartbeat). */
  now: () => string;
  /** After each step, with its time. */
  onStep?: (step: string, ms: number) => void;
}

function rebuild(raw: SQLite.Database, load: BulkLoadRow, { now, onStep }: RebuildOptions): void {
  // Loads begun before triggers were set aside recorded indexes only, with no `type`.
  const objects = JSON.parse(load.dropped_indexes) as Array<{ type?: 'index' | 'trigger'; name: string; sql: string }>;
  const timed = (step: string, fn: () => void) => {
    const started = Date.now();
    fn();
    heartbeat(raw, now());
    onStep?.(step, Date.now() - started);
  };
  // Let SQLite's sorter use a second thread while building indexes. Each thread takes up to the page
  // cache's size, so a small cache (runs spilled to temporary files and merged) keeps memory flat
  // however large the corpus, and small runs sort faster too. The full-text step keeps the small
  // cache: its pending terms come on top of it.
  const threads = raw.pragma('threads', { simple: true }) as number;
  const tempStore = raw.pragma('temp_store', { simple: true }) as number;
  const cacheSize = raw.pragma('cache_size', { simple: true }) as number;
  raw.pragma('threads = 2');
  raw.pragma('temp_store = FILE');
  raw.pragma('cache_size = -2048');
  try {
    for (const { name, sql } of objects.filter((o) => o.type !== 'trigger')) {
      timed(`index ${name}`, () => raw.exec(sql.replace(/^\s*create\s+index\s+/i, 'create index if not exists ')));
    }
    timed('full-text index', () =>
      raw
        .transaction(() => {
          const current = raw.prepare('select from_rowid from leak_bulk_loads').get() as BulkLoadRow | undefined;
          // Another process finished it while this one built indexes.
          if (!current) return;
          // FTS5 writes its pending terms out as a new segment each time they pass `hashsize` (1 MiB by
          // default), and merges segments as they pile up: for a load, far fewer and larger segments,
          // then the default again for ordinary ingests.
          const hashSize = (raw.prepare(`select v from leak_records_fts_config where k = 'hashsize'`).get() as { v: number } | undefined)?.v ?? FTS5_DEFAULT_HASHSIZE;
          setFtsHashSize(raw, LOAD_FTS_HASHSIZE);
          raw.prepare('insert into leak_records_fts (rowid, search_text) select rowid, search_text from leak_records where rowid > ?').run(current.from_rowid);
          setFtsHashSize(raw, hashSize);
          // From here on, records are indexed as they arrive again.
          for (const { sql } of objects.filter((o) => o.type === 'trigger')) raw.exec(sql.replace(/^\s*create\s+trigger\s+/i, 'create trigger if not exists '));
          raw.prepare('delete from leak_bulk_loads').run();
          raw.prepare('delete from leak_bulk_load_processes').run();
        })
        .immediate(),
    );
  } finally {
    raw.pragma(`threads = ${threads}`);
    raw.pragma(`temp_store = ${tempStore}`);
    raw.pragma(`cache_size = ${cacheSize}`);
  }
}
