import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareDatabase } from '../../src/db/prepare.js';
import { JWT_SECRET, TEST_PG_URL, testDatabaseUrl } from '../helpers/build-app.js';
import { countersAndRecounts } from '../helpers/recount.js';
import { type Replica, startServer as startPgServer } from '../helpers/pg-replica.js';
import { startServer as startServe, until, withDatabase, withDb } from '../helpers/serve.js';

/**
 * Nothing acknowledged is lost when a process is killed outright (SIGKILL: no handler runs): a
 * server in the middle of an NDJSON ingest and of incident writes, and import-leaks in the middle
 * of a plain and a bulk load. After each kill, every batch acknowledged is stored exactly once and
 * every counter kept beside the rows equals a recount of them; sending the same input again then
 * completes it, still exactly once.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-crash-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const PASSWORD = 'a crash test admin passphrase';

async function databaseUrl(name: string) {
  return TEST_PG_URL ? testDatabaseUrl() : `sqlite:${path.join(dir, `${name}.db`)}`;
}

function envForUrl(url: string) {
  return { ...process.env, THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, THREATMON_ADMIN_PASSWORD: PASSWORD, THREATMON_PORT: '0', THREATMON_LOG_LEVEL: 'warn', THREATMON_DATA_DIR: dir };
}

/** `threatmon serve` on `url`, resolved with its address once it listens. */
const startServer = (url: string) => startServe(envForUrl(url));

/** Three empty PostgreSQL servers for the sharded runs (each run spreads a new corpus: fresh ones each time). */
const shards: Replica[] = [];
async function shardServers(): Promise<string[]> {
  for (const s of shards.splice(0)) s.remove();
  for (let i = 0; i < 3; i++) shards.push(await startPgServer());
  return shards.map((s) => s.url);
}
afterAll(() => {
  for (const s of shards.splice(0)) s.remove();
});

async function killHard(child: ChildProcess) {
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGKILL');
  await closed;
}


const countRecords = (url: string, domain: string) =>
  withDb(url, async (db) => Number((await db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).where('domain', '=', domain).executeTakeFirstOrThrow()).n));


/**
 * What the next start does first over shards (prepareDatabase): the killed batch's prepared parts
 * on the shards are ended, committed as its main transaction was, or rolled back. Until then a
 * batch committed in the main database (its counters) may still be prepared on a shard, unseen.
 */
const nextStart = (url: string, shardsEnv: Record<string, string>) => withDatabase(url, prepareDatabase, shardsEnv);

async function expectSound(url: string) {
  const { kept, recounted } = await withDb(url, countersAndRecounts);
  expect(kept).toEqual(recounted);
}

const line = (domain: string, i: number) => `${JSON.stringify({ email: `user${i}@${domain}`, password: i % 3 ? `pw-${i}` : undefined, ip: `198.51.${i % 250}.${(i >> 8) % 250}` })}\n`;

describe('a kill -9 loses nothing acknowledged and leaves every counter true', () => {
  it('of a server during an NDJSON ingest and incident writes', async () => {
    const url = await databaseUrl('server');
    let { base, child } = await startServer(url);
    const api = async (b: string, method: string, p: string, token: string | null, body?: unknown) =>
      fetch(`${b}/api/v1${p}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const login = async (b: string) => ((await (await api(b, 'POST', '/auth/token/', null, { username: 'admin', password: PASSWORD })).json()) as { access: string }).access;
    let token = await login(base);
    const source = (await (await api(base, 'POST', '/leaks/sources/', token, { name: 'Crash' })).json()) as { id: string };
    const domain = 'crash.example';
    const total = 30_000;

    // Incident writes beside the ingest, until the kill.
    let writing = true;
    const incidents = (async () => {
      for (let i = 0; writing; i++) {
        try {
          const inc = (await (await api(base, 'POST', '/incidents/', token, { title: `crash ${i}`, iocs: [{ type: 'ipv4', value: `192.0.2.${i % 250}` }] })).json()) as { id?: string };
          if (inc.id) await api(base, 'POST', `/incidents/${inc.id}/iocs/`, token, Array.from({ length: 20 }, (_, k) => ({ type: 'domain', value: `d${k}.crash-${i}.example` })));
        } catch {
          // The server is gone: the loop ends with the flag.
        }
      }
    })();

    // The stream: its first half goes, the server commits some of it, then it is killed mid-stream.
    let sent = 0;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const ingest = fetch(`${base}/api/v1/leaks/sources/${source.id}/records/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
      body,
      duplex: 'half',
    } as RequestInit).catch(() => null);
    const enc = new TextEncoder();
    for (; sent < total / 2; sent += 500) controller.enqueue(enc.encode(Array.from({ length: 500 }, (_, k) => line(domain, sent + k)).join('')));
    await until('a committed batch of the stream', async () => (await countRecords(url, domain)) >= 1000);
    await until('incidents written beside it', async () =>
      withDb(url, async (db) => Number((await db.selectFrom('iocs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) > 20),
    );
    const acknowledged = await countRecords(url, domain);
    await killHard(child);
    writing = false;
    await incidents;
    await ingest;

    const afterKill = await countRecords(url, domain);
    expect(afterKill).toBeGreaterThanOrEqual(acknowledged);
    expect(afterKill).toBeLessThanOrEqual(sent);
    await expectSound(url);

    // Restarted, the same stream sent whole completes it: each record once.
    ({ base, child } = await startServer(url));
    try {
      token = await login(base);
      const res = await fetch(`${base}/api/v1/leaks/sources/${source.id}/records/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${token}` },
        body: Array.from({ length: total }, (_, i) => line(domain, i)).join(''),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ accepted: total - afterKill, duplicates: afterKill });
      expect(await countRecords(url, domain)).toBe(total);
      await expectSound(url);
    } finally {
      await killHard(child);
    }
  }, 300_000);

  // On PostgreSQL also with the corpus over three shards: the killed batch's prepared parts on
  // the shards are ended at the next start (committed or rolled back as its main transaction was).
  const variants = [
    { bulk: false, sharded: false },
    { bulk: true, sharded: false },
    ...(TEST_PG_URL ? [{ bulk: false, sharded: true }, { bulk: true, sharded: true }] : []),
  ];
  for (const { bulk, sharded } of variants) {
    it(`of import-leaks${bulk ? ' --bulk' : ''} during its load${sharded ? ', the corpus over three shards' : ''}`, async () => {
      const name = `${bulk ? 'bulk' : 'plain'}${sharded ? '-sharded' : ''}`;
      const url = await databaseUrl(name);
      const domain = `${name}-crash.example`;
      const shardsEnv: Record<string, string> = sharded ? { THREATMON_CORPUS_SHARDS: (await shardServers()).join(',') } : {};
      const envFor = (u: string) => ({ ...envForUrl(u), ...shardsEnv });
      const fifo = path.join(dir, `${name}.ndjson`);
      fs.rmSync(fifo, { force: true });
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const args = ['--import', 'tsx', 'src/cli/main.ts', 'import-leaks', fifo, '--source', 'Crash import', '--create-source', '--no-progress', ...(bulk ? ['--bulk'] : [])];
      const child = spawn(process.execPath, args, { cwd: ROOT, env: envFor(url) });
      let stderr = '';
      let acknowledged = 0;
      child.stderr.on('data', (d) => {
        stderr += d;
        acknowledged = Math.max(acknowledged, ...[...stderr.matchAll(/^(\d+) records/gm)].map((m) => Number(m[1])));
      });
      const closed = new Promise((resolve) => child.on('close', resolve));
      const pipe = await fs.promises.open(fifo, 'w');
      // Fed until a commit is reported (its progress line), the pipe held open: then killed.
      let sent = 0;
      while (acknowledged === 0 && sent < 2_000_000) {
        await pipe.write(Array.from({ length: 1000 }, (_, k) => line(domain, sent + k)).join(''));
        sent += 1000;
      }
      child.kill('SIGKILL');
      await closed;
      await pipe.close().catch(() => undefined);
      expect(acknowledged, stderr).toBeGreaterThan(0);
      if (sharded) await nextStart(url, shardsEnv);
      const afterKill = await countRecords(url, domain);
      expect(afterKill).toBeGreaterThanOrEqual(acknowledged);
      expect(afterKill).toBeLessThanOrEqual(sent);
      await expectSound(url);

      // The same command on the whole input: the killed bulk load is finished, every record once.
      const file = path.join(dir, `${name}-whole.ndjson`);
      const total = sent + 2000;
      fs.writeFileSync(file, Array.from({ length: total }, (_, i) => line(domain, i)).join(''));
      const again = spawnSync(process.execPath, [...args.slice(0, 4), file, ...args.slice(5)], { cwd: ROOT, env: envFor(url), encoding: 'utf8' });
      expect(again.status, again.stderr).toBe(0);
      expect(again.stderr).toContain(`${total - afterKill} accepted, ${afterKill} duplicates, 0 rejected`);
      expect(await countRecords(url, domain)).toBe(total);
      await expectSound(url);
      if (bulk) {
        await withDb(url, async (db) => {
          expect(await (db as unknown as Kysely<any>).selectFrom('leak_bulk_loads').selectAll().execute()).toEqual([]);
        });
      }
    }, 300_000);
  }

  it('of the launcher of import-leaks (the PID the shell holds): the import ends with it', async () => {
    const url = await databaseUrl('launcher');
    const domain = 'launcher-crash.example';
    const fifo = path.join(dir, 'launcher.ndjson');
    fs.rmSync(fifo, { force: true });
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // What a shell runs: the installed command, which re-runs itself with a bounded heap.
    const launcher = spawn(process.execPath, ['bin/threatmon.js', 'import-leaks', fifo, '--source', 'Launcher', '--create-source', '--no-progress'], { cwd: ROOT, env: envForUrl(url) });
    let stderr = '';
    launcher.stderr.on('data', (d) => (stderr += d));
    const pipe = await fs.promises.open(fifo, 'w');
    let sent = 0;
    await until('the import storing records', async () => {
      await pipe.write(Array.from({ length: 1000 }, (_, k) => line(domain, sent + k)).join(''));
      sent += 1000;
      return (await countRecords(url, domain)) > 0;
    });
    const children = fs.readFileSync(`/proc/${launcher.pid}/task/${launcher.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    expect(children, stderr).toHaveLength(1);
    const importPid = children[0] as number;
    await killHard(launcher);
    // The import notices at once (its channel to the launcher closes); a bound on how long, not a sleep.
    const alive = () => fs.existsSync(`/proc/${importPid}`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${importPid}/status`, 'utf8'));
    for (let waited = 0; alive() && waited < 30_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive(), `import ${importPid} outlived its launcher`).toBe(false);
    await pipe.close().catch(() => undefined);
    // Nothing more is written: what it stored stays, and the counters agree with it.
    const stored = await countRecords(url, domain);
    expect(stored).toBeLessThanOrEqual(sent);
    await expectSound(url);
  }, 120_000);
});
