/**
 * Load benchmarks: starts the real server (child process, embedded SQLite in a temp folder, or
 * PostgreSQL with BENCH_PG_URL) and drives it over loopback with wrk where it is installed
 * (`apt-get install wrk`), else with autocannon from this process (bench/wrk.ts).
 *
 *   npm run bench                      # every scenario, 10 s each, 32 connections
 *   npm run bench -- health me-memory  # only these scenarios
 *   BENCH_DURATION=5 BENCH_CONNECTIONS=16 npm run bench
 *   BENCH_WORKERS=1 npm run bench      # API processes (THREATMON_WORKERS); default: see workersFor()
 *   BENCH_LEAKS_DB_URL=postgres://... npm run bench -- leaks   # searches only, on a corpus imported before
 *   BENCH_LEAK_SOURCES=1 npm run bench -- leaks   # the corpus as one file of one source (default 50)
 *
 * Each measured run follows an unrecorded warm-up of BENCH_WARMUP seconds (default 5), so the
 * figures are of a server whose code the JIT has compiled, not of its first second.
 *
 * Results are printed and written to bench/results/latest.json, with the host's speed before and
 * after (bench/host-speed.ts): compare figures only from runs at about the same reference.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { MonitoringRepository } from '../src/modules/monitoring/monitoring.repository.js';
import { freePort } from '../test/helpers/free-port.js';
import { hostReference } from './host-speed.js';
import { drive, type LoadOptions, mergedPercentiles, useWrk } from './wrk.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const WORKERS = process.env.BENCH_WORKERS;
const ADMIN_PASSWORD = 'bench admin password 123';
// High enough that the limiter does all its work without ever answering 429.
const PLAN_LIMITS = 'starter=100000000,professional=100000000,enterprise=100000000';

interface Server {
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
function workersFor(dbUrl: string): string {
  if (WORKERS) return WORKERS;
  if (!dbUrl.startsWith('postgres')) return 'auto';
  const local = ['127.0.0.1', 'localhost', '[::1]', ''].includes(new URL(dbUrl).hostname);
  return local ? String(Math.max(1, os.availableParallelism() - 1)) : 'auto';
}

/** A database of its own: a new SQLite file, or a new schema of BENCH_PG_URL. */
async function freshDatabaseUrl(name: string): Promise<string> {
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

function databaseUrl(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `threatmon-bench-${name}-`));
  return process.env.BENCH_PG_URL ?? `sqlite:${path.join(dir, 'bench.db')}`;
}

/** The server's command: src/ through tsx, or (`compiled`) what `npm start` runs, bin/threatmon.js over dist/. */
async function startServer(name: string, env: Record<string, string>, dbUrl = databaseUrl(name), compiled = false): Promise<Server> {
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
function apiOf(s: Server) {
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
function serverRssMb(pid: number): number {
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

async function stop(server: Server) {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

interface Result {
  scenario: string;
  requests_per_sec: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
  /** Kept out of latest.json (see mergedPercentiles). */
  histogram?: Array<[number, number]>;
}

async function load(scenario: string, opts: Omit<LoadOptions, 'connections' | 'duration'> & { connections?: number }): Promise<Result> {
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
async function startFloor(s: Server, sample: string): Promise<{ url: string; stop: () => Promise<void> }> {
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

async function seedUsers(server: Server, n: number) {
  for (let i = 0; i < n; i++) {
    await fetch(`${server.url}/api/v1/users/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ username: `bench-user-${i}`, email: `u${i}@bench.example`, password: ADMIN_PASSWORD, role: 'viewer' }),
    });
  }
}

async function explainIncidentList(dbUrl: string) {
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

async function runChild(args: string[], env: Record<string, string>, nodeFlags = ['--import', 'tsx']): Promise<string> {
  const child = spawn(process.execPath, [...nodeFlags, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`);
  return out;
}

const scenarios: Record<string, () => Promise<Result[]>> = {
  async leaks() {
    const records = Number(process.env.BENCH_LEAK_RECORDS ?? 1_000_000);
    // One source per file. BENCH_LEAK_SOURCES=1: the whole corpus in one file and one source, as
    // when a single large leak is imported (see the README on what that costs).
    const sources = Number(process.env.BENCH_LEAK_SOURCES ?? 50);
    if (!Number.isInteger(sources) || sources < 1) throw new Error(`BENCH_LEAK_SOURCES must be a positive integer, not ${process.env.BENCH_LEAK_SOURCES}`);
    const dataDir = path.join(ROOT, 'bench', 'data', sources === 50 ? `leaks-${records}` : `leaks-${records}-${sources}-sources`);
    if (!fs.existsSync(dataDir)) await runChild(['bench/generate-leaks.ts', dataDir, String(records), String(sources)], {});
    // BENCH_LEAKS_DB_URL: a database that already holds the corpus (from an earlier run), to measure
    // searches again without importing; the import figure is then left out.
    const reuse = process.env.BENCH_LEAKS_DB_URL;
    const dbUrl = reuse ?? databaseUrl('leaks');
    // The importer runs the compiled CLI code (dist/), as `threatmon import-leaks` does.
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    // SQLite: one bulk load (import-leaks --bulk) around the 50 files unless BENCH_IMPORT=plain.
    const bulk = !dbUrl.startsWith('postgres') && process.env.BENCH_IMPORT !== 'plain';
    const imported = reuse
      ? null
      : JSON.parse(
          // With the heap limit bin/threatmon.js gives import-leaks.
          await runChild(['bench/import-leaks.mjs', dataDir, ...(bulk ? ['--bulk'] : [])], { THREATMON_DATABASE_URL: dbUrl, THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD }, [
            '--max-old-space-size=128',
            '--max-semi-space-size=8',
          ]),
        );
    if (imported) {
      console.log(
        `import-leaks${bulk ? ' --bulk' : ''}: ${imported.records} records from ${imported.files} files in ${imported.seconds} s = ${imported.records_per_sec} records/s, peak RSS ${imported.peak_rss_mb} MB` +
          (bulk ? ` (loading ${imported.load_seconds} s, then indexes ${Number((imported.seconds - imported.load_seconds).toFixed(1))} s)` : ''),
      );
      if (bulk) console.log(`  index rebuild (ms): ${JSON.stringify(imported.rebuild_ms)}`);
    }
    const s = await startServer('leaks', {}, dbUrl);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const conns = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
      const sampleFile = fs.existsSync(path.join(dataDir, 'source-07.ndjson')) ? 'source-07.ndjson' : 'source-00.ndjson';
      const sample = JSON.parse(fs.readFileSync(path.join(dataDir, sampleFile), 'utf8').split('\n')[123] as string) as { email: string };
      const q = (qs: string) => ({ url: `${s.url}/api/v1/leaks/search/?${qs}`, headers: auth, connections: conns });
      return [
        ...(imported
          ? [{ scenario: `import-leaks${bulk ? ' --bulk' : ''} (records/s)`, requests_per_sec: imported.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: imported.peak_rss_mb } as Result]
          : []),
        await load(`search email (${records})`, q(`email=${encodeURIComponent(sample.email)}`)),
        await load(`search domain (${records})`, q('domain=corp7.example')),
        await load(`search ip CIDR /16 (${records})`, q('ip=10.20.0.0/16')),
        await load(`search q full text (${records})`, q('q=%22jennifer%20smith%22')),
        await load(`search q prefix (${records})`, q('q=robins*%20jam*')),
        await load(`search domain gmail.com, the largest (${records})`, q('domain=gmail.com')),
      ];
    } finally {
      await stop(s);
    }
  },
  /**
   * Monitoring at corpus scale (issue figures): the 1M-record import with and without 10,000
   * active monitors (100 organizations; SQLite --bulk, PostgreSQL plain), backfill scans of a
   * domain of about 2,000 records, of 500 e-mails and of a keyword, with the API's latency while
   * the keyword scan runs, and the alert list over 100,000 alerts of one organization.
   */
  async monitoring() {
    const records = Number(process.env.BENCH_LEAK_RECORDS ?? 1_000_000);
    const monitors = Number(process.env.BENCH_MONITORS ?? 10_000);
    const dataDir = path.join(ROOT, 'bench', 'data', `leaks-${records}`);
    if (!fs.existsSync(dataDir)) await runChild(['bench/generate-leaks.ts', dataDir, String(records), '50'], {});
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    // BENCH_MONITORING_DB: a database that holds the corpus already (from an earlier run): the
    // imports are left out, the backfills and the alert list measured on it.
    const reuse = process.env.BENCH_MONITORING_DB;
    const plainUrl = reuse ?? (await freshDatabaseUrl('monitoring-plain'));
    const bulk = !plainUrl.startsWith('postgres');
    const importInto = async (dbUrl: string, extra: string[]) =>
      JSON.parse(
        await runChild(['bench/import-leaks.mjs', dataDir, ...(bulk ? ['--bulk'] : []), ...extra], { THREATMON_DATABASE_URL: dbUrl, THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD }, [
          '--max-old-space-size=128',
          '--max-semi-space-size=8',
        ]),
      ) as { records_per_sec: number; peak_rss_mb: number; seconds: number; alerts?: number; monitors?: number; terms?: number };
    const results: Result[] = [];
    if (!reuse) {
      const without = await importInto(plainUrl, []);
      const withMonitors = await importInto(await freshDatabaseUrl('monitoring-watched'), ['--monitors', String(monitors)]);
      const ratio = withMonitors.records_per_sec / without.records_per_sec;
      console.log(`import-leaks${bulk ? ' --bulk' : ''} of ${records}: ${without.records_per_sec} records/s (RSS ${without.peak_rss_mb} MB) without monitors`);
      console.log(
        `  with ${withMonitors.monitors} monitors (${withMonitors.terms} terms): ${withMonitors.records_per_sec} records/s (RSS ${withMonitors.peak_rss_mb} MB), ${withMonitors.alerts} alerts = ${((100 * (withMonitors.alerts ?? 0)) / records).toFixed(2)}% of records; ${(100 * ratio).toFixed(0)}% of the rate (target at least 50%, RSS under 250 MB)`,
      );
      results.push(
        { scenario: `import ${records} without monitors (records/s)`, requests_per_sec: without.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: without.peak_rss_mb } as Result,
        { scenario: `import ${records} with ${monitors} monitors (records/s)`, requests_per_sec: withMonitors.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: withMonitors.peak_rss_mb, alerts: withMonitors.alerts } as Result,
      );
    }

    // Backfills, on the corpus without monitors.
    const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: plainUrl }));
    const db = deps.database.db;
    const near2000 = await db.selectFrom('leak_domain_counts').select(['key', 'n']).where('n', '>=', 1500).where('n', '<=', 2500).orderBy('n').limit(1).executeTakeFirst();
    await deps.database.close();
    const domain = near2000 ? near2000.key.slice(0, -1).split('.').reverse().join('.') : 'corp20.example';
    const emails = fs
      .readFileSync(path.join(dataDir, 'source-11.ndjson'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(0, 500)
      .map((l) => (JSON.parse(l) as { email: string }).email);
    const s = await startServer('monitoring', {}, plainUrl);
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const source = await api('POST', '/leaks/sources/', { name: `During the scan ${Date.now()}` });
      const backfill = async (label: string, body: object, whileScanning?: () => Promise<string>) => {
        const started = Date.now();
        const monitor = await api('POST', '/monitoring/', { name: label, ...body });
        const during = whileScanning ? whileScanning() : Promise.resolve('');
        let scan: { status: string; started_at: string; finished_at: string; records_scanned: number; alerts_raised: number };
        for (;;) {
          [scan] = (await api('GET', `/monitoring/${monitor.id}/scans/`)).results;
          if (scan.status === 'completed') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const seconds = (Date.parse(scan.finished_at) - Date.parse(scan.started_at)) / 1000;
        console.log(`backfill ${label}: ${seconds.toFixed(2)} s running (${((Date.now() - started) / 1000).toFixed(2)} s from the POST), ${scan.records_scanned} records read, ${scan.alerts_raised} alerts${await during}`);
        results.push({ scenario: `backfill ${label} (s)`, requests_per_sec: 0, latency_p50_ms: 0, latency_p99_ms: Math.round(seconds * 1000), non_2xx: 0, errors: 0 });
        return monitor;
      };
      const domainMonitor = await backfill(`domain ${domain} (${near2000?.n ?? '?'} records)`, { type: 'domain', terms: [domain] });
      await backfill('500 e-mails', { type: 'email', terms: emails });
      // While a keyword reads the whole corpus: the API's latency, and ingests' (writes go on).
      await backfill('keyword "jennifer smith"', { type: 'keyword', terms: ['jennifer smith'] }, async () => {
        let n = 0;
        const ingests: number[] = [];
        const writer = (async () => {
          for (let i = 0; i < 20; i++) {
            const t0 = Date.now();
            await api('POST', `/leaks/sources/${source.id}/records/`, Array.from({ length: 50 }, () => ({ email: `during${n++}@scan.example` })));
            ingests.push(Date.now() - t0);
          }
        })();
        const r = await drive({ url: `${s.url}/api/v1/monitoring/`, headers, connections: 8, duration: 10 });
        await writer;
        return `; meanwhile GET /monitoring/ at 8 connections: ${r.requests_per_sec} req/s, p99 ${r.latency_p99_ms} ms, errors ${r.non_2xx}; 20 ingests of 50 records: slowest ${Math.max(...ingests)} ms`;
      });

      // 100,000 alerts in one organization (the admin's), over the corpus's first records.
      const seedDeps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: plainUrl }));
      try {
        const sdb = seedDeps.database.db;
        const ids = (await sdb.selectFrom('leak_records').select('id').orderBy('id').limit(100_000).execute()).map((r) => r.id);
        const statuses = ['new', 'acknowledged', 'resolved', 'false_positive'];
        const severities = ['low', 'medium', 'high', 'critical'];
        const base = Date.now() - 90 * 86_400_000;
        const orgId = domainMonitor.created_by ? (await sdb.selectFrom('users').select('organization_id').where('id', '=', domainMonitor.created_by).executeTakeFirstOrThrow()).organization_id : '';
        // Written as the matcher writes them (each keeping its record's JSON), without their events.
        const alerts = new MonitoringRepository(seedDeps.database.dialect);
        for (let i = 0; i < ids.length; i += 1000) {
          await alerts.insertAlerts(
            sdb,
            ids.slice(i, i + 1000).map((id, j) => {
              const k = i + j;
              const at = new Date(base + k * 60_000).toISOString();
              return { id: seedDeps.newId(), organization_id: orgId, monitor_id: domainMonitor.id, leak_record_id: id, matched_term: `bench-${k}`, matched_field: 'domain', severity: severities[k % 4] as string, status: statuses[Math.floor(k / 4) % 4] as string, note: '', incident_id: null, created_at: at, updated_at: at };
            }),
          );
        }
        // As autovacuum would soon after so many inserts: the count reads the index alone.
        if (seedDeps.database.dialect === 'postgres') await sdb.executeQuery(CompiledQuery.raw('vacuum analyze monitor_alerts'));
      } finally {
        await seedDeps.database.close();
      }
      const alertsPath = '/api/v1/monitoring/alerts/?status=new&severity=high';
      results.push(await load('GET /monitoring/alerts/?status=new&severity=high (100000 alerts)', { url: `${s.url}${alertsPath}`, headers }));
      // The same page from the floor server: what this machine allows before threatmon's own work.
      const floor = await startFloor(s, alertsPath.slice(7));
      try {
        results.push(await load('  floor: the same page, same SQL, JSON and headers', { url: `${floor.url}${alertsPath}` }));
      } finally {
        await floor.stop();
      }
    } finally {
      await stop(s);
    }
    return results;
  },
  /**
   * Tracking tokens: the trigger of a live web_bug against an unknown key (alternating rounds: the
   * two must look alike), a flood of one token beside the incident list, and the token list and a
   * timeline over 100,000 exposures.
   */
  async tokens() {
    const s = await startServer('tokens', {});
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const bug = await api('POST', '/tracking-tokens/', { name: 'Bench bug', kind: 'web_bug' });
      const live = `${s.url}${new URL(bug.trigger_url).pathname}`;
      const unknown = `${s.url}/t/${'Q'.repeat(32)}/`;
      const results: Result[] = [];
      // Alternating rounds: the two see the same machine, and noise averages out over the rounds.
      for (let round = 1; round <= 4; round++) {
        results.push(await load(`GET /t/<key>/ live web_bug, round ${round}`, { url: live }));
        results.push(await load(`GET /t/<key>/ unknown key, round ${round}`, { url: unknown }));
      }
      // Over the requests of all rounds of each (wrk's histograms merged), else the mean of the rounds.
      const rounds = (label: string) => results.filter((r) => r.scenario.includes(label));
      const over = (label: string) =>
        mergedPercentiles(rounds(label), [50, 99]) ??
        (['latency_p50_ms', 'latency_p99_ms'] as const).map((k) => rounds(label).reduce((a, r) => a + r[k], 0) / rounds(label).length);
      const [liveAt, unknownAt] = [over('live'), over('unknown')];
      ['p50', 'p99'].forEach((name, i) => {
        const [a, b] = [liveAt[i]!, unknownAt[i]!];
        console.log(`  ${name} over all rounds: live ${a.toFixed(2)} ms, unknown ${b.toFixed(2)} ms, difference ${((100 * Math.abs(a - b)) / Math.max(a, b, 0.001)).toFixed(1)}% (target under 10%)`);
      });

      // The flood: 10 s of 32 connections on one token while the incident list is loaded.
      for (let i = 0; i < 200; i++) await api('POST', '/incidents/', { title: `Bench incident ${i}`, severity: i % 2 ? 'high' : 'low' });
      const flooded = await api('POST', '/tracking-tokens/', { name: 'Flooded', kind: 'web_bug' });
      const list = { url: `${s.url}/api/v1/incidents/?severity=high`, headers, connections: 8, duration: 10 };
      const quiet = await drive(list);
      const [busy] = await Promise.all([drive(list), drive({ url: `${s.url}${new URL(flooded.trigger_url).pathname}`, connections: 32, duration: 10 })]);
      await new Promise((r) => setTimeout(r, 1000));
      const recorded = (await api('GET', `/tracking-tokens/${flooded.id}/`)).exposure_count;
      console.log(`flood of one token (32 connections, 10 s): ${recorded} exposures recorded (cap 60); incident list p99 ${quiet.latency_p99_ms} ms alone, ${busy.latency_p99_ms} ms during the flood (${(busy.latency_p99_ms / Math.max(quiet.latency_p99_ms, 0.01)).toFixed(2)}x, target under 2x)`);
      results.push({ scenario: 'incident list during a token flood (p99 ms)', requests_per_sec: busy.requests_per_sec, latency_p50_ms: busy.latency_p50_ms, latency_p99_ms: busy.latency_p99_ms, non_2xx: busy.non_2xx, errors: busy.errors, recorded } as Result);

      // 100,000 exposures over 100 tokens of the admin's organization (1,000 each), seeded directly.
      const tokenIds: string[] = [bug.id];
      for (let i = 1; i < 100; i++) tokenIds.push((await api('POST', '/tracking-tokens/', { name: `Bench token ${i}`, kind: i % 2 ? 'credential' : 'api_key' })).id);
      const dbUrl = s.dbUrl;
      const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
      try {
        const db = deps.database.db;
        const orgId = (await db.selectFrom('tracking_tokens').select('organization_id').where('id', '=', bug.id).executeTakeFirstOrThrow()).organization_id;
        const base = Date.now() - 30 * 86_400_000;
        for (const [n, tokenId] of tokenIds.entries()) {
          const rows = Array.from({ length: 1000 }, (_, k) => ({
            id: deps.newId(),
            organization_id: orgId,
            token_id: tokenId,
            channel: ['http', 'login', 'api_key'][k % 3] as string,
            occurred_at: new Date(base + (n * 1000 + k) * 1000).toISOString(),
            source_ip: `198.51.100.${k % 250}`,
            user_agent: 'Mozilla/5.0 (bench)',
            referer: null,
            method: 'GET',
            path: '/t/x/',
            leak_record_id: null,
            leak_source_id: null,
            leak_source_name: null,
          }));
          for (let i = 0; i < rows.length; i += 250) await db.insertInto('tracking_token_exposures').values(rows.slice(i, i + 250)).execute();
          await db.updateTable('tracking_tokens').set((eb) => ({ exposure_count: eb('exposure_count', '+', 1000) })).where('id', '=', tokenId).execute();
        }
      } finally {
        await deps.database.close();
      }
      results.push(await load('GET /tracking-tokens/ (100 tokens, 100000 exposures)', { url: `${s.url}/api/v1/tracking-tokens/`, headers }));
      results.push(await load('GET /tracking-tokens/<uuid>/timeline/ (1000+ exposures)', { url: `${s.url}/api/v1/tracking-tokens/${bug.id}/timeline/`, headers }));
      results.push(await load('GET .../timeline/?channel=login', { url: `${s.url}/api/v1/tracking-tokens/${bug.id}/timeline/?channel=login`, headers }));
      return results;
    } finally {
      await stop(s);
    }
  },
  /**
   * Webhooks: delivery latency (event recorded to receiver) at a fixed event rate into 10
   * webhooks, the cost of 5 subscribed webhooks on POST /incidents/, and a receiver that hangs
   * beside others. The receiver runs in this process.
   */
  async webhooks() {
    const latencies: number[] = [];
    const byPath = new Map<string, number>();
    // Each (webhook, webhook-id) once: a message delivered twice would show here.
    const seen = new Set<string>();
    let duplicates = 0;
    let hang = false;
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.url === '/hang' && hang) return; // never answered: the sender's 10 s timeout ends it
        const { timestamp } = JSON.parse(body) as { timestamp: string };
        const key = `${req.url} ${String(req.headers['webhook-id'])}`;
        if (seen.has(key)) duplicates++;
        seen.add(key);
        latencies.push(Date.now() - Date.parse(timestamp));
        byPath.set(req.url ?? '', (byPath.get(req.url ?? '') ?? 0) + 1);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookBase = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    const s = await startServer('webhooks', { THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    const results: Result[] = [];
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const post = { url: `${s.url}/api/v1/incidents/`, method: 'POST' as const, headers, body: JSON.stringify({ title: 'Bench webhook incident', severity: 'high' }) };
      const without = await load('POST /incidents/ without webhooks', post);
      const five: string[] = [];
      for (let i = 0; i < 5; i++) five.push((await api('POST', '/webhooks/', { url: `${hookBase}/five-${i}`, events: ['incident.created'] })).id);
      const withFive = await load('POST /incidents/ with 5 webhooks subscribed', post);
      console.log(`  with 5 webhooks: ${((100 * withFive.requests_per_sec) / without.requests_per_sec).toFixed(0)}% of the rate without (target at least 90%)`);
      results.push(without, withFive);
      for (const id of five) await api('DELETE', `/webhooks/${id}/`);

      const seconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 30);
      const rate = Number(process.env.BENCH_EVENT_RATE ?? 1000);
      const measure = async (label: string, hooks: string[], eventRate: number) => {
        const ids: string[] = [];
        for (const path of hooks) ids.push((await api('POST', '/webhooks/', { url: `${hookBase}${path}`, events: ['incident.created'] })).id);
        latencies.length = 0;
        byPath.clear();
        duplicates = 0;
        // Events made: counted by the API (autocannon leaves out the requests still in flight at its end).
        const incidents = async () => (await api('GET', '/incidents/?page_size=1')).count as number;
        const before = await incidents();
        const r = await autocannon({ ...post, connections: 16, duration: seconds, overallRate: eventRate });
        let expected = (await incidents()) - before;
        const wanted = hooks.filter((h) => h !== '/hang');
        const deadline = Date.now() + 60_000;
        while (wanted.some((h) => (byPath.get(h) ?? 0) < expected) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
        // Requests still in flight when the load ended made events too: counted again once all is delivered.
        expected = (await incidents()) - before;
        latencies.sort((a, b) => a - b);
        const q = (f: number) => latencies[Math.min(latencies.length - 1, Math.floor(f * latencies.length))] ?? 0;
        const delivered = wanted.reduce((n, h) => n + (byPath.get(h) ?? 0), 0);
        console.log(`${label}: ${expected} events in ${seconds} s (${Math.round(expected / seconds)}/s), ${delivered} of ${expected * wanted.length} deliveries to the answering webhooks (${duplicates} twice); event to delivery p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`);
        results.push({ scenario: `${label} (event to delivery)`, requests_per_sec: Math.round(delivered / seconds), latency_p50_ms: q(0.5), latency_p99_ms: q(0.99), non_2xx: r.non2xx, errors: expected * wanted.length - delivered });
        for (const id of ids) await api('DELETE', `/webhooks/${id}/`);
      };
      // Every event goes to all 10: deliveries are ten times the event rate.
      await measure('100 events/s into 10 webhooks (1000 deliveries/s)', Array.from({ length: 10 }, (_, i) => `/ten-100-${i}`), 100);
      hang = true;
      await measure('100 events/s, one of 5 webhooks hanging', ['/hang', '/ok-1', '/ok-2', '/ok-3', '/ok-4'], 100);
      hang = false;
      if (rate !== 100) await measure(`${rate} events/s into 10 webhooks (${rate * 10} deliveries/s)`, Array.from({ length: 10 }, (_, i) => `/ten-${rate}-${i}`), rate);
    } finally {
      await stop(s);
      receiver.closeAllConnections();
      receiver.close();
    }
    return results;
  },
  /**
   * The request hot path against its ceiling: threatmon as `npm start` runs it (one process, the
   * rate limiter on, request logging at info) and a bare node:http "hello" server, loaded in
   * alternating rounds: the single GET and the filtered list of 50 over 10,000 incidents, each as a
   * share of the ceiling measured beside it. Each is also loaded on the floor server
   * (bench/floor-server.ts): the same SQL, JSON and headers without threatmon's per-request work.
   */
  async ceiling() {
    const dbUrl = databaseUrl('ceiling');
    const seed = spawn(process.execPath, ['--import', 'tsx', 'bench/seed-incidents.ts', '10000'], {
      cwd: ROOT,
      env: { ...process.env, THREATMON_DATABASE_URL: dbUrl, THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD, THREATMON_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await new Promise((resolve, reject) => seed.on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`seed failed: ${code}`)))));
    const port = await freePort();
    const bare = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('hello')).listen(${port}, '127.0.0.1')`], { stdio: 'ignore' });
    // At npm start's level, info: its access lines are written to the pipe and dropped here.
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    const s = await startServer('ceiling', { THREATMON_WORKERS: process.env.BENCH_WORKERS ?? '1', THREATMON_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }, dbUrl, true);
    s.child.stdout?.removeAllListeners('data');
    s.child.stdout?.resume();
    const results: Result[] = [];
    try {
      const headers = { authorization: `Bearer ${s.token}` };
      const one = (await apiOf(s)('GET', '/incidents/?page_size=1')).results[0].id as string;
      const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
      const floor = await startFloor(s, `/incidents/${one}/`);
      const listPath = '/api/v1/incidents/?status=open&severity=high&page_size=50';
      const ratios: Record<string, number[]> = { single: [], list: [], floorSingle: [], floorList: [] };
      try {
        for (let round = 1; round <= rounds; round++) {
          const ceiling = await load(`node:http hello (ceiling), round ${round}`, { url: `http://127.0.0.1:${port}/` });
          const floorSingle = await load(`  floor: GET /incidents/<uuid>/, round ${round}`, { url: `${floor.url}/api/v1/incidents/${one}/` });
          const single = await load(`GET /incidents/<uuid>/, round ${round}`, { url: `${s.url}/api/v1/incidents/${one}/`, headers });
          const floorList = await load(`  floor: GET ${listPath.slice(7)}, round ${round}`, { url: `${floor.url}${listPath}` });
          const list = await load(`GET ${listPath.slice(7)}, round ${round}`, { url: `${s.url}${listPath}`, headers });
          ratios.single?.push(single.requests_per_sec / ceiling.requests_per_sec);
          ratios.list?.push(list.requests_per_sec / ceiling.requests_per_sec);
          ratios.floorSingle?.push(floorSingle.requests_per_sec / ceiling.requests_per_sec);
          ratios.floorList?.push(floorList.requests_per_sec / ceiling.requests_per_sec);
          results.push(ceiling, floorSingle, single, floorList, list);
        }
      } finally {
        await floor.stop();
      }
      const mean = (xs: number[]) => `${((100 * xs.reduce((a, b) => a + b, 0)) / xs.length).toFixed(1)}%`;
      console.log(`  single GET: ${mean(ratios.single ?? [])} of the ceiling (target at least 30%); the floor: ${mean(ratios.floorSingle ?? [])}`);
      console.log(`  list of 50: ${mean(ratios.list ?? [])} of the ceiling; the floor: ${mean(ratios.floorList ?? [])}`);
    } finally {
      await stop(s);
      bare.kill();
    }
    return results;
  },
  async incidents() {
    const dbUrl = databaseUrl('incidents');
    const n = Number(process.env.BENCH_INCIDENTS ?? 100_000);
    const seed = spawn(process.execPath, ['--import', 'tsx', 'bench/seed-incidents.ts', String(n)], {
      cwd: ROOT,
      env: { ...process.env, THREATMON_DATABASE_URL: dbUrl, THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD, THREATMON_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await new Promise((resolve, reject) => seed.on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`seed failed: ${code}`)))));
    await explainIncidentList(dbUrl);
    const s = await startServer('incidents', {}, dbUrl);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const one = (await (await fetch(`${s.url}/api/v1/incidents/?page_size=1`, { headers: auth })).json()) as { results: Array<{ id: string }> };
      return [
        await load(`GET /incidents/?status=open,investigating&severity=high (${n})`, { url: `${s.url}/api/v1/incidents/?status=open,investigating&severity=high`, headers: auth }),
        await load('GET /incidents/<uuid>/', { url: `${s.url}/api/v1/incidents/${one.results[0]!.id}/`, headers: auth }),
        await load('POST /incidents/', {
          url: `${s.url}/api/v1/incidents/`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'Bench incident', severity: 'high', tags: ['bench'] }),
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  /**
   * 60 s (BENCH_SOAK_SECONDS) of mixed reads and writes as fast as the server answers them: the
   * incident list and one incident, a new incident, a leak search, and an ingest of two new leak
   * records. It reports errors and non-2xx answers, and the resident memory of the server's
   * processes (primary and workers) from the 20th second to the end: a leak shows as growth.
   */
  async soak() {
    const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
    const s = await startServer('soak', {});
    try {
      const json = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const post = async (p: string, body: unknown) => (await fetch(`${s.url}/api/v1${p}`, { method: 'POST', headers: json, body: JSON.stringify(body) })).json() as Promise<{ id: string }>;
      const source = await post('/leaks/sources/', { name: 'Soak' });
      const incident = await post('/incidents/', { title: 'Soak', severity: 'high' });
      let n = 0;
      const rss: Array<[number, number]> = [];
      const started = Date.now();
      const sampler = setInterval(() => rss.push([(Date.now() - started) / 1000, serverRssMb(s.child.pid as number)]), 1000);
      const r = await autocannon({
        url: s.url,
        connections: CONNECTIONS,
        duration: seconds,
        headers: json,
        requests: [
          { method: 'GET', path: '/api/v1/incidents/?status=open,investigating&severity=high' },
          { method: 'GET', path: `/api/v1/incidents/${incident.id}/` },
          { method: 'POST', path: '/api/v1/incidents/', body: JSON.stringify({ title: 'Soak incident', severity: 'medium', tags: ['soak'] }) },
          { method: 'GET', path: '/api/v1/leaks/search/?domain=soak.example&page_size=10' },
          {
            method: 'POST',
            path: `/api/v1/leaks/sources/${source.id}/records/`,
            setupRequest: (req) => ({ ...req, body: JSON.stringify([{ email: `soak${n++}@soak.example`, password: `pw ${n}` }, { email: `soak${n++}@soak.example` }]) }),
          },
        ],
      });
      clearInterval(sampler);
      const at = (t: number) => rss.reduce((best, cur) => (Math.abs(cur[0] - t) < Math.abs(best[0] - t) ? cur : best), rss[0] ?? [0, 0])[1];
      const from = at(20);
      const to = rss.at(-1)?.[1] ?? 0;
      const growth = from ? ((to - from) / from) * 100 : 0;
      console.log(
        `soak ${seconds} s mixed reads and writes: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms, ${r.requests.total} requests, errors ${r.errors}, non-2xx ${r.non2xx}, timeouts ${r.timeouts}; RSS ${from} MB at 20 s, ${to} MB at the end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%, target under +10%)`,
      );
      return [
        {
          scenario: `soak mixed reads and writes (${seconds} s)`,
          requests_per_sec: Math.round(r.requests.average),
          latency_p50_ms: r.latency.p50,
          latency_p99_ms: r.latency.p99,
          non_2xx: r.non2xx,
          errors: r.errors + r.timeouts,
          rss_mb_at_20s: from,
          rss_mb_at_end: to,
          rss_growth_pct: Number(growth.toFixed(1)),
        } as Result,
      ];
    } finally {
      await stop(s);
    }
  },
  async health() {
    const s = await startServer('health', {});
    try {
      return [await load('GET /health/', { url: `${s.url}/health/` })];
    } finally {
      await stop(s);
    }
  },
  async list() {
    const s = await startServer('list', {});
    try {
      await seedUsers(s, 120);
      return [
        await load('GET /users/?page_size=50', {
          url: `${s.url}/api/v1/users/?page_size=50&ordering=-created_at`,
          headers: { authorization: `Bearer ${s.token}` },
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  async login() {
    const s = await startServer('login', {});
    try {
      return [
        await load('POST /auth/token/', {
          url: `${s.url}/api/v1/auth/token/`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  async 'me-memory'() {
    const s = await startServer('me-memory', {});
    try {
      return [await load('GET /auth/me/ (limits: memory)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
  async 'me-redis'() {
    const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const s = await startServer('me-redis', { THREATMON_REDIS_URL: redisUrl });
    try {
      return [await load('GET /auth/me/ (limits: redis)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
  async 'me-off'() {
    const s = await startServer('me-off', { THREATMON_RATE_LIMITS: 'off' });
    try {
      return [await load('GET /auth/me/ (limits: off)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !(w in scenarios));
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
console.log(
  `threatmon bench: ${DURATION} s per scenario after ${WARMUP} s of warm-up, ${CONNECTIONS} connections, load by ${useWrk() ? 'wrk' : 'autocannon'}, ${os.cpus().length} cores, API workers ${WORKERS ?? `auto on SQLite, ${workersFor('postgres://127.0.0.1')} with PostgreSQL on this machine`}, ${process.env.BENCH_PG_URL ? 'PostgreSQL' : 'SQLite'}${process.env.BENCH_LEAKS_DB_URL ? ` (leak searches: ${process.env.BENCH_LEAKS_DB_URL.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}, BENCH_LEAKS_DB_URL)` : ''}\n`,
);
// The host's speed before and after, so that runs from other days (or hours) can be compared.
const hostBefore = hostReference();
console.log(`host reference before: ${hostBefore} ms (bench/host-speed.ts, a fixed workload on one core; lower is a faster host)\n`);
const results: Result[] = [];
for (const name of wanted.length ? wanted : Object.keys(scenarios)) results.push(...(await scenarios[name]!()));
const hostAfter = hostReference();
console.log(`\nhost reference after: ${hostAfter} ms`);
fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
fs.writeFileSync(
  path.join(ROOT, 'bench', 'results', 'latest.json'),
  `${JSON.stringify({ date: new Date().toISOString(), duration_s: DURATION, warmup_s: WARMUP, workers: WORKERS ?? 'default', connections: CONNECTIONS, loader: useWrk() ? 'wrk' : 'autocannon', database: process.env.BENCH_PG_URL ? 'postgres' : 'sqlite', leaks_database: process.env.BENCH_LEAKS_DB_URL?.replace(/\/\/[^@/]*@/, '//') ?? null, host_reference_ms: { before: hostBefore, after: hostAfter }, results }, null, 2)}\n`,
);
