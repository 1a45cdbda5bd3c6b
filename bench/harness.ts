/** What every benchmark scenario uses: the bench server, its API, the load and the floor server. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { freePort } from '../test/helpers/free-port.js';
import { drive, type LoadOptions } from './wrk.js';


export const ROOT = path.resolve(import.meta.dirname, '..');
export const DURATION = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
export const WORKERS = process.env.BENCH_WORKERS;
export const ADMIN_PASSWORD = 'bench admin password 123';
// High enough that the limiter does all its work without ever answering 429.
export const PLAN_LIMITS = 'starter=100000000,professional=100000000,enterprise=100000000';

export interface Server {
  url: string;
  child: ChildProcess;
  token: string;
  /** The database it serves. */
  dbUrl: string;
}


/**
 * API processes for a server on `dbUrl`: BENCH_WORKERS, else one per core on SQLite (the database
 * works inside them), and one per core but one with a PostgreSQL server on this machine, which
 * needs a core of its own. Leak searches on the 1M-record corpus at 16 connections on 2 cores, 1
 * API process against 2, in interleaved runs: about the same requests/s, p99 19-22 ms against
 * 23-25 (domain), 11-12 against 23-26 (CIDR), 93-98 against 98-140 (prefix): two API processes and
 * the database's backends took the same two cores from one another.
 */
export function workersFor(dbUrl: string): string {
  if (WORKERS) return WORKERS;
  if (!dbUrl.startsWith('postgres')) return 'auto';
  const local = ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(dbUrl).hostname);
  return local ? String(Math.max(1, os.availableParallelism() - 1)) : 'auto';
}

/** A database of its own: a new SQLite file, or a new schema of BENCH_PG_URL. */
export async function freshDatabaseUrl(name: string): Promise<string> {
  const base = process.env.BENCH_PG_URL;
  if (!base) return databaseUrl(name);
  const schema = `bench_${name.replace(/\W/g, '_')}_${Date.now().toString(36)}`;
  const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: base }));
  await deps.database.db.executeQuery(CompiledQuery.raw(`create schema ${schema}`));
  await deps.database.close();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export function databaseUrl(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `threatmon-bench-${name}-`));
  return process.env.BENCH_PG_URL ?? `sqlite:${path.join(dir, 'bench.db')}`;
}

/** The server's command: src/ through tsx, or (`compiled`) what `npm start` runs, bin/threatmon.js over dist/. */
export async function startServer(name: string, env: Record<string, string>, dbUrl = databaseUrl(name), compiled = false): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, compiled ? ['bin/threatmon.js', 'serve'] : ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      THREATMON_DATABASE_URL: dbUrl,
      THREATMON_PORT: String(port),
      THREATMON_LOG_LEVEL: 'warn',
      THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD,
      THREATMON_JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      THREATMON_PLAN_LIMITS: PLAN_LIMITS,
      THREATMON_WORKERS: workersFor(dbUrl),
      // The bench logs in once: a keyword backfill of the 100M corpus outlasts the default 15 minutes.
      THREATMON_ACCESS_TTL: '6h',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health/`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://127.0.0.1:${port}`;
  const login = await fetch(`${url}/api/v1/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
  const { access } = (await login.json()) as { access: string };
  return { url, child, token: access, dbUrl };
}

/** JSON calls to a bench server's API as its admin (a body only when given). */
export function apiOf(s: Server) {
  return async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${s.url}/api/v1${p}`, {
      method,
      headers: { authorization: `Bearer ${s.token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
}

/** Resident memory of a server process and its workers, in MB (Linux /proc). */
export function serverRssMb(pid: number): number {
  const rssOf = (p: string) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
  let kb = 0;
  try {
    kb += rssOf(String(pid));
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) kb += rssOf(child);
    }
  } catch {
    // The process ended between two reads.
  }
  return Math.round(kb / 1024);
}

export async function stop(server: Server) {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

export interface Result {
  scenario: string;
  requests_per_sec: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
  /** Kept out of latest.json (see mergedPercentiles). */
  histogram?: Array<[number, number]>;
  /** Imports: the importing process's peak resident memory. */
  peak_rss_mb?: number;
}

export async function load(scenario: string, opts: Omit<LoadOptions, 'connections' | 'duration'> & { connections?: number }): Promise<Result> {
  const o = { connections: CONNECTIONS, ...opts };
  if (WARMUP > 0) await drive({ ...o, duration: WARMUP });
  const { requests: _total, loader, histogram, ...figures } = await drive({ ...o, duration: DURATION });
  const result: Result = { scenario, ...figures };
  Object.defineProperty(result, 'histogram', { value: histogram, enumerable: false });
  console.log(
    `${scenario.padEnd(50)} ${String(result.requests_per_sec).padStart(7)} req/s   p50 ${String(result.latency_p50_ms).padStart(5)} ms   p99 ${String(result.latency_p99_ms).padStart(5)} ms   ${loader === 'wrk' ? 'status>=400' : 'non-2xx'} ${result.non_2xx}`,
  );
  return result;
}

/**
 * The floor server (bench/floor-server.ts) over threatmon's database: its SQL, JSON and response
 * headers (copied from one of threatmon's answers to `sample`, a path under /api/v1) without
 * threatmon's framework and per-request work.
 */
export async function startFloor(s: Server, sample: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const api = apiOf(s);
  const org = ((await api('GET', '/auth/me/')) as { organization: { id: string } }).organization.id;
  const res = await fetch(`${s.url}/api/v1${sample}`, { headers: { authorization: `Bearer ${s.token}` } });
  await res.arrayBuffer();
  const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type', 'etag', 'x-request-id', 'transfer-encoding']);
  const headers = Object.fromEntries([...res.headers].filter(([k]) => !own.has(k)));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floor-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, THREATMON_DATABASE_URL: s.dbUrl, THREATMON_LOG_LEVEL: 'warn', FLOOR_PORT: String(port), FLOOR_ORG: org, FLOOR_HEADERS: JSON.stringify(headers) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    child.stdout?.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function seedUsers(server: Server, n: number) {
  for (let i = 0; i < n; i++) {
    await fetch(`${server.url}/api/v1/users/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ username: `bench-user-${i}`, email: `u${i}@bench.example`, password: ADMIN_PASSWORD, role: 'viewer' }),
    });
  }
}

export async function explainIncidentList(dbUrl: string) {
  const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
  try {
    const org = await deps.database.db.selectFrom('organizations').select('id').where('name', '=', 'Default').executeTakeFirstOrThrow();
    const base = deps.database.db
      .selectFrom('incidents')
      .where('organization_id', '=', org.id)
      .where('status', 'in', ['open', 'investigating'])
      .where('severity', 'in', ['high']);
    const page = base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(50).compile();
    // The API counts these filters from incident_counters, not from the incidents table.
    const count = deps.database.db
      .selectFrom('incident_counters')
      .select((eb) => eb.fn.sum('n').as('n'))
      .where('organization_id', '=', org.id)
      .where('status', 'in', ['open', 'investigating'])
      .where('severity', 'in', ['high'])
      .compile();
    const prefix = deps.database.dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    for (const [label, q] of [['count', count], ['page', page]] as const) {
      const r = await deps.database.db.executeQuery(CompiledQuery.raw(prefix + q.sql, [...q.parameters]));
      const lines = (r.rows as Array<Record<string, unknown>>).map((row) => String(row.detail ?? row['QUERY PLAN']));
      console.log(`  plan (${label}): ${lines.join(' | ')}`);
    }
  } finally {
    await deps.database.close();
  }
}

export async function runChild(args: string[], env: Record<string, string>, nodeFlags = ['--import', 'tsx']): Promise<string> {
  const child = spawn(process.execPath, [...nodeFlags, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`);
  return out;
}
