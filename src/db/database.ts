import { CorpusShards } from './corpus-shards.js';
import { hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import { Kysely, type LogEvent, PostgresDialect, type SqliteDatabase, SqliteDialect, type SqliteStatement, sql } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Config } from '../config.js';
import { ReadReplicas, replicaName } from './replicas.js';
import { leakRecordKey } from './migrations/0007_leak_record_keys.js';
import type { DB } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  /**
   * The better-sqlite3 handle behind `db` (SQLite only), for bulk paths that prepare one statement
   * and run it per row. It is the same single connection, so it joins any open Kysely transaction.
   */
  readonly sqlite?: SQLite.Database;
  /**
   * PostgreSQL: `COPY ... FROM STDIN` of `chunks` (COPY text format) on `db`'s connection, so that
   * it joins `db`'s transaction. Returns the rows copied.
   */
  copyFrom?(db: Kysely<DB>, copySql: string, chunks: Iterable<string | Uint8Array>): Promise<number>;
  /** PostgreSQL: the servers the corpus is spread over (THREATMON_CORPUS_SHARDS), when there are any. */
  readonly corpusShards?: CorpusShards;
  /** PostgreSQL read replicas (THREATMON_DATABASE_READ_URLS), when there are any. */
  readonly replicas?: ReadReplicas;
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** better-sqlite3 binds neither booleans nor Dates: convert them so repositories stay dialect-free. */
function toSqliteParam(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value;
}

const STATEMENT_CACHE_SIZE = 500;

const rawReaders = new WeakMap<SQLite.Statement, { raw: SQLite.Statement; toObject: (row: unknown[]) => Record<string, unknown> }>();

/**
 * A reader statement switched to array rows, with the function making a row an object (once per
 * cached statement). A repeated column name keeps the last value, as better-sqlite3's objects do.
 */
function rawReader(stmt: SQLite.Statement) {
  let r = rawReaders.get(stmt);
  if (!r) {
    const names = stmt.columns().map((c) => c.name);
    const toObject = (row: unknown[]) => {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) o[names[i] as string] = row[i];
      return o;
    };
    r = { raw: stmt.raw(true), toObject };
    rawReaders.set(stmt, r);
  }
  return r;
}

function wrapSqlite(raw: SQLite.Database): SqliteDatabase {
  // Kysely prepares every query anew; preparing is a large share of a small query's cost, so
  // statements are kept by SQL text (least recently used dropped first).
  const cache = new Map<string, SQLite.Statement>();
  const prepareCached = (query: string) => {
    let stmt = cache.get(query);
    if (stmt) {
      cache.delete(query);
    } else {
      stmt = raw.prepare(query);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    }
    cache.set(query, stmt);
    return stmt;
  };
  return {
    close: () => raw.close(),
    prepare(query: string): SqliteStatement {
      // Kysely opens transactions with a plain (deferred) BEGIN. Taking the write lock at BEGIN
      // instead means a transaction waits its turn (busy_timeout) when another process (a cluster
      // worker, the importer) is writing, rather than failing with SQLITE_BUSY when it upgrades.
      const stmt = prepareCached(query === 'begin' ? 'begin immediate' : query);
      const map = (params: ReadonlyArray<unknown>) => params.map(toSqliteParam);
      if (!stmt.reader) {
        return { reader: false, all: (params) => stmt.all(map(params)), run: (params) => stmt.run(map(params)), iterate: (params) => stmt.iterate(map(params)) as IterableIterator<unknown> };
      }
      // Rows as arrays, made into objects here: a third cheaper than better-sqlite3's own objects
      // for a page of wide rows.
      const { raw: rawRows, toObject } = rawReader(stmt);
      return {
        reader: true,
        all: (params) => (rawRows.all(map(params)) as unknown[][]).map(toObject),
        run: (params) => rawRows.run(map(params)),
        iterate: function* (params) {
          for (const row of rawRows.iterate(map(params)) as IterableIterator<unknown[]>) yield toObject(row);
        },
      };
    },
  };
}

/**
 * SQLite: a reading statement run at once on the connection, when no transaction holds it (else
 * undefined: the caller goes through Kysely, which waits for the transaction). Kysely's way to the
 * one connection (a lock and a chain of promises per statement) is most of a small read's cost, and
 * a statement run synchronously between two others needs no lock.
 */
const directReaders = new WeakMap<Kysely<DB>, (query: string, params: readonly unknown[]) => unknown[] | undefined>();
export const directReader = (db: Kysely<DB>) => directReaders.get(db);

/** SQLite's answer when another connection holds the lock a statement needs. */
export const isBusy = (err: unknown) => err instanceof SQLite.SqliteError && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED');

/**
 * How long opening a database waits to put its write-ahead log back while another process holds
 * it: a bulk load's rebuild (see bulk-load.ts) holds it for one index build at a time, which takes
 * longer than the busy timeout on a large corpus.
 */
export const WAL_WAIT_MS = 10 * 60_000;

/**
 * Puts the database in its write-ahead log, retrying while another connection holds it until
 * `waitMs` has passed (each attempt waits up to the connection's busy timeout, or 50 ms when SQLite
 * answers busy at once). `onWait` is called once, before the first retry.
 */
export function toWal(raw: SQLite.Database, waitMs: number, onWait?: () => void): void {
  const deadline = Date.now() + waitMs;
  for (let waited = false; ; waited = true) {
    let mode: unknown;
    try {
      mode = raw.pragma('journal_mode = WAL', { simple: true });
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      if (!waited) onWait?.();
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      continue;
    }
    // An in-memory database has no log: it stays in memory.
    if (mode !== 'wal' && mode !== 'memory') throw new Error(`SQLite did not return to its write-ahead log (journal mode ${String(mode)})`);
    return;
  }
}

export function openSqlite(file: string, opts: { busyTimeoutMs?: number; walWaitMs?: number } = {}): SQLite.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const raw = new SQLite(file);
  // First, so that the switch to the write-ahead log below waits for another process's statement
  // rather than failing at once.
  raw.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  toWal(raw, opts.walWaitMs ?? WAL_WAIT_MS, () =>
    process.stderr.write(`threatmon: ${file} is held by another process (a bulk load rebuilding its indexes?): waiting for it\n`),
  );
  raw.pragma('foreign_keys = ON');
  raw.pragma('synchronous = NORMAL');
  // 64 MiB of page cache (the default is 2 MiB): index pages of a large corpus stay in memory.
  raw.pragma('cache_size = -65536');
  raw.pragma('temp_store = MEMORY');
  // Migration 0007's key in SQL (SQLite has no SHA-256 of its own).
  raw.function('leak_record_key', { deterministic: true }, (sourceId, fingerprint) => leakRecordKey(String(sourceId), String(fingerprint)));
  return raw;
}

/**
 * Settings of each PostgreSQL session. No JIT: it compiles a statement whose estimated cost passes
 * jit_above_cost (a leak search over a slice of a large corpus) for longer than the statement then
 * runs. work_mem 32 MB: the bitmap of a common word stays exact, so its rows are not checked again
 * by computing their vectors. No parallel workers for a statement: an API serves many at once, and
 * the workers' coordination only takes cores from them. Index builds keep theirs (a maintenance
 * setting). The measures behind each are in docs/SCALING.md.
 */
const PG_SESSION_OPTIONS = '-c jit=off -c work_mem=32MB -c max_parallel_workers_per_gather=0';

/** The URL with PG_SESSION_OPTIONS before any `options` it gives (a setting it gives again wins). */
export function withSessionOptions(connectionString: string): string {
  const url = new URL(connectionString);
  const given = url.searchParams.get('options');
  url.searchParams.set('options', given ? `${PG_SESSION_OPTIONS} ${given}` : PG_SESSION_OPTIONS);
  return url.toString();
}

/** PostgreSQL's text for a UTC timestamp (DateStyle ISO): "2026-11-22 22:31:14.641574+00", "+00" for timestamptz only. */
const PG_UTC_TIMESTAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?(\+00)?$/;

/**
 * A PostgreSQL timestamp as JavaScript's toISOString() writes it (milliseconds, fraction cut, not
 * rounded), rewritten as text when it is in UTC: parsing it as a Date was a twentieth of the API's
 * time serving a page of leak records. Anything else (another zone, BC, a year past 9999) goes
 * through Date. `utc`: a timestamp without time zone, read as UTC.
 */
export function pgTimestampToIso(v: string, utc: boolean): string {
  const m = PG_UTC_TIMESTAMP.exec(v);
  if (m && (utc ? m[4] === undefined : m[4] !== undefined)) return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
  return new Date(utc ? `${v}Z` : v).toISOString();
}

function pgTypes() {
  // Timestamps come back as ISO strings and 64-bit counts as numbers, as they do on SQLite.
  const getTypeParser = (oid: number, format?: 'text' | 'binary') => {
    if (oid === 1184 || oid === 1114) return (v: string) => pgTimestampToIso(v, oid === 1114);
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  };
  return { getTypeParser } as pg.CustomTypesConfig;
}

export function createDatabase(
  config: Pick<Config, 'databaseUrl' | 'databaseKind'> & Partial<Pick<Config, 'pgPreparedStatements' | 'databaseReadUrls' | 'replicaMaxLagMs' | 'replicaCheckMs' | 'corpusShards'>>,
  options: { queryLog?: (sql: string) => void } = {},
): Database {
  const { queryLog } = options;
  // Every statement run, as its text (tests hold the leak search's statements to checked-in files).
  const log = queryLog ? (event: LogEvent) => queryLog(event.query.sql) : undefined;
  if (config.databaseKind === 'sqlite') {
    const raw = openSqlite(config.databaseUrl.slice('sqlite:'.length));
    const wrapped = wrapSqlite(raw);
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: wrapped }), log });
    directReaders.set(db, (query, params) => {
      if (raw.inTransaction) return undefined;
      queryLog?.(query);
      const stmt = wrapped.prepare(query);
      return stmt.reader ? (stmt.all(params) as unknown[]) : undefined;
    });
    return {
      db,
      dialect: 'sqlite',
      sqlite: raw,
      async ping() {
        if (!raw.open) throw new Error('database closed');
        raw.prepare('select 1').get();
      },
      close: () => db.destroy(),
    };
  }
  const newPool = (connectionString: string) => {
    const pool = new pg.Pool({ connectionString: withSessionOptions(connectionString), max: 10, connectionTimeoutMillis: 5000, types: pgTypes() });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    return pool;
  };
  const pool = newPool(config.databaseUrl);
  const readUrls = config.databaseReadUrls ?? [];
  let replicas: ReadReplicas | undefined;
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: clientsOf(pool, config.pgPreparedStatements !== false, () => replicas) }), log });
  if (readUrls.length) {
    replicas = new ReadReplicas(db, readUrls.map(newPool), readUrls.map(replicaName), { maxLagMs: config.replicaMaxLagMs ?? 5000, checkMs: config.replicaCheckMs ?? 1000 });
  }
  // A shard is read as the main database is: ISO timestamps, numeric counts, plans kept.
  const shardReader = (url: string) => new Kysely<DB>({ dialect: new PostgresDialect({ pool: clientsOf(newPool(url), config.pgPreparedStatements !== false, () => undefined) }), log });
  const corpusShards = config.corpusShards?.length ? new CorpusShards(config.corpusShards, shardReader) : undefined;
  return {
    db,
    dialect: 'postgres',
    replicas,
    corpusShards,
    async copyFrom(on, copySql, chunks) {
      const token = `${process.pid}.${++copyCount}`;
      pendingCopies.set(token, { copySql, chunks });
      try {
        const { rows } = await sql<{ n: number }>`${sql.raw(`${COPY_MARKER}${token} */`)}`.execute(on);
        return rows[0]?.n ?? 0;
      } finally {
        pendingCopies.delete(token);
      }
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      replicas?.stop();
      await corpusShards?.close();
      await db.destroy();
    },
  };
}

/**
 * Kysely hands a statement's text and values to the connection and nothing else, so a COPY on a
 * transaction's connection is asked for by a statement naming it (see Database.copyFrom): the
 * connection runs the COPY it names instead.
 */
const COPY_MARKER = '/* threatmon copy ';
const pendingCopies = new Map<string, { copySql: string; chunks: Iterable<string | Uint8Array> }>();
let copyCount = 0;

/**
 * The pool Kysely takes: a client of the primary, or of the read replica chosen for the read in
 * progress (see ReadReplicas.read); each runs COPY statements (see COPY_MARKER) and, when
 * `prepare`, keeps plans (see preparing).
 */
function clientsOf(pool: pg.Pool, prepare: boolean, replicas: () => ReadReplicas | undefined) {
  const seen = new WeakSet<pg.PoolClient>();
  return {
    async connect() {
      const r = replicas();
      const replica = r?.scope.getStore();
      const client = await (replica === undefined ? pool : (r?.pools[replica] as pg.Pool)).connect();
      if (seen.has(client)) return client;
      seen.add(client);
      // A connection cut while checked out (a bulk load holds one for minutes) must not crash the
      // process: its next query fails instead, and the pool drops it when it is released.
      client.on('error', () => {});
      const query = client.query.bind(client) as PgQuery;
      const run = prepare ? preparing(client, query) : query;
      const patched: PgQuery = async (text, values) => {
        if (typeof text !== 'string' || !text.startsWith(COPY_MARKER)) return run(text, values);
        const job = pendingCopies.get(text.slice(COPY_MARKER.length, -3));
        if (!job) throw new Error('COPY statement without rows');
        const stream = copyFrom(job.copySql);
        // pg hands back the stream it is given, now writing to the connection.
        void query(stream);
        await pipeline(Readable.from(job.chunks), stream);
        return { command: 'COPY', rowCount: stream.rowCount, rows: [{ n: stream.rowCount }] };
      };
      Object.assign(client, { query: patched });
      return client;
    },
    async end() {
      await Promise.all([pool.end(), replicas()?.close()]);
    },
  };
}

/** Named statements a connection keeps at most; past this, new ones run unnamed (planned each time). */
const MAX_PREPARED_PER_CONNECTION = 200;
/**
 * Longer texts run unnamed: multi-row inserts, whose text changes with the row count and whose
 * planning is a small part of their work, would otherwise fill the server's memory with plans.
 */
const MAX_PREPARED_TEXT = 4096;
/** The query-text shapes that gain from a kept plan (not DDL, not transaction control). */
const PREPARABLE = /^\s*(select|with|insert|update|delete)\b/i;

type PgQuery = (text: unknown, values?: unknown[]) => Promise<unknown>;

/**
 * Runs Kysely's statements as named prepared statements, one name per query text (Kysely keeps
 * values out of the text, so a route's query has one text). PostgreSQL parses and plans each once
 * per connection, then reuses the plan (a generic one, when it costs no more than a custom plan):
 * for the short queries of an API, planning is most of the server's work, and a search that
 * joins four tables took longer to plan than to run. If a migration changes what a kept statement
 * returns ("cached plan must not change result type"), the statement is dropped and run again.
 * THREATMON_PG_PREPARED_STATEMENTS=false turns this off (for a pooler that cannot keep them).
 */
function preparing(client: pg.PoolClient, query: PgQuery): PgQuery {
  const names = new Set<string>();
  return async (text, values) => {
    if (typeof text !== 'string' || text.length > MAX_PREPARED_TEXT || !PREPARABLE.test(text)) return query(text, values);
    const name = `tm_${hash('sha1', text, 'hex').slice(0, 24)}`;
    if (!names.has(name) && names.size >= MAX_PREPARED_PER_CONNECTION) return query(text, values);
    names.add(name);
    try {
      return await query({ name, text, values });
    } catch (err) {
      if ((err as { code?: string }).code !== '0A000' || !/cached plan/.test(String((err as Error).message))) throw err;
      // Inside a transaction this fails too (it is aborted): the error stands, and the
      // statement is dropped the next time it runs outside one.
      await query(`deallocate "${name}"`).catch(() => {
        throw err;
      });
      // pg remembers the statements it has parsed on the connection (not a public field).
      const kept: unknown = Reflect.get(Reflect.get(client, 'connection') ?? {}, 'parsedStatements');
      if (kept && typeof kept === 'object') Reflect.deleteProperty(kept, name);
      return query({ name, text, values });
    }
  };
}
