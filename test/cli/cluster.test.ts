import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { answerCounters, type Channel, IpcCounterStore, joinPrincipalChanges, PrincipalChangeRelay } from '../../src/runtime/cluster.js';
import { MemoryCounterStore } from '../../src/runtime/counters.js';
import { PrincipalCache } from '../../src/runtime/principal-cache.js';
import { freePort } from '../helpers/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-cluster-'));
const PASSWORD = 'cluster admin password 1';
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Two ends of a channel in one process, delivering asynchronously as IPC does. */
function channelPair(): [Channel, Channel] {
  const a = new EventEmitter();
  const b = new EventEmitter();
  const end = (self: EventEmitter, other: EventEmitter): Channel => ({
    send: (m) => setImmediate(() => other.emit('message', JSON.parse(JSON.stringify(m)))),
    on: (e, l) => self.on(e, l),
  });
  return [end(a, b), end(b, a)];
}


function startServer(port: number, extraEnv: Record<string, string>, db = 'cluster.db') {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--workers', '2'], {
    cwd: ROOT,
    env: {
      ...process.env,
      THREATMON_DATABASE_URL: `sqlite:${path.join(dir, db)}`,
      THREATMON_PORT: String(port),
      THREATMON_LOG_LEVEL: 'info',
      THREATMON_ADMIN_PASSWORD: PASSWORD,
      ...extraEnv,
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitForLog(server: ReturnType<typeof startServer>, pattern: RegExp, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(server.output())) {
    if (server.child.exitCode !== null) throw new Error(`server exited with ${server.child.exitCode}:\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('IPC counters', () => {
  it('answers hit, peek and reset from the one store the primary holds', async () => {
    const [workerEnd, primaryEnd] = channelPair();
    const shared = new MemoryCounterStore();
    answerCounters(primaryEnd, shared);
    const a = new IpcCounterStore(workerEnd);
    const b = new IpcCounterStore(workerEnd);
    expect(await a.hit('k', 2, 60_000)).toMatchObject({ count: 1, allowed: true });
    expect(await b.hit('k', 2, 60_000)).toMatchObject({ count: 2, allowed: true });
    expect(await a.hit('k', 2, 60_000)).toMatchObject({ count: 2, allowed: false });
    expect(await b.peek('k')).toMatchObject({ count: 2 });
    await a.reset('k');
    expect(await shared.peek('k')).toEqual({ count: 0, resetMs: 0 });
  });

  it('counts a small limit hit by hit, exactly, even when asked to count ahead', async () => {
    const [workerEnd, primaryEnd] = channelPair();
    const shared = new MemoryCounterStore();
    answerCounters(primaryEnd, shared);
    const a = new IpcCounterStore(workerEnd);
    const b = new IpcCounterStore(workerEnd);
    const hits = [];
    for (let i = 0; i < 7; i++) hits.push(await (i % 2 ? b : a).hit('k', 5, 60_000, { countAhead: true }));
    expect(hits.map((h) => h.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(hits.map((h) => h.count)).toEqual([1, 2, 3, 4, 5, 5, 5]);
    expect(await shared.peek('k')).toMatchObject({ count: 5 });
    // A higher limit (a new plan) is asked of the primary at once, not refused until the window ends.
    expect(await a.hit('k', 6, 60_000, { countAhead: true })).toMatchObject({ count: 6, allowed: true });
  });

  /** A channel that counts the messages a worker sends. */
  function countingPair(): { worker: Channel; primary: Channel; sent: () => number } {
    const [worker, primary] = channelPair();
    let sent = 0;
    return { worker: { send: (m) => (sent++, worker.send(m)), on: (e, l) => worker.on(e, l) }, primary, sent: () => sent };
  }

  it('takes blocks of a large limit: few messages, and never more allowed than the limit across workers', async () => {
    const shared = new MemoryCounterStore();
    const ends = [countingPair(), countingPair()];
    for (const end of ends) answerCounters(end.primary, shared);
    const [a, b] = ends.map((end) => new IpcCounterStore(end.worker));
    let allowed = 0;
    for (let i = 0; i < 12_000; i++) if ((await (i % 2 ? b! : a!).hit('big', 10_000, 60_000, { countAhead: true })).allowed) allowed++;
    // Both workers keep spending what they took, so the whole limit is used and not one more.
    expect(allowed).toBe(10_000);
    expect(await shared.peek('big')).toMatchObject({ count: 10_000 });
    // Hit by hit would be 12,000 messages: blocks of up to 64 while 256+ are left, then one each,
    // and once refused a worker refuses until the window ends without asking.
    expect(ends[0]!.sent() + ends[1]!.sent()).toBeLessThan(700);
  });

  it('lets concurrent hits of one worker share the block being taken, and starts again with a new window', async () => {
    // One clock for the primary's window and the worker's block, moved by hand: nothing sleeps.
    let now = 1_000;
    const shared = new MemoryCounterStore(() => now);
    const end = countingPair();
    answerCounters(end.primary, shared);
    const store = new IpcCounterStore(end.worker, 2000, () => now);
    const hits = await Promise.all(Array.from({ length: 40 }, () => store.hit('w', 100_000, 50, { countAhead: true })));
    expect(hits.every((h) => h.allowed)).toBe(true);
    expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(end.sent()).toBe(1);
    now += 49;
    expect(await store.hit('w', 100_000, 50, { countAhead: true })).toMatchObject({ count: 41, allowed: true });
    expect(end.sent()).toBe(1);
    now += 31;
    expect(await store.hit('w', 100_000, 50, { countAhead: true })).toMatchObject({ count: 1, allowed: true });
    expect(end.sent()).toBe(2);
  });

  it('fails a call the primary never answers instead of hanging', async () => {
    const [workerEnd] = channelPair();
    const store = new IpcCounterStore(workerEnd, 50);
    await expect(store.hit('k', 1, 1000)).rejects.toThrow(/no answer from the primary/);
  });
});

describe('IPC principal changes', () => {
  it("a worker's change resolves only once every worker has forgotten", async () => {
    const relay = new PrincipalChangeRelay();
    const caches = [new PrincipalCache<string>(60_000), new PrincipalCache<string>(60_000)];
    for (const cache of caches) {
      const [workerEnd, primaryEnd] = channelPair();
      relay.add(primaryEnd);
      joinPrincipalChanges(workerEnd, cache);
      cache.put('u', 'alice', cache.mark());
    }
    const errors: unknown[] = [];
    await caches[0]!.changed((err) => errors.push(err));
    expect(caches.map((c) => c.get('u'))).toEqual([undefined, undefined]);
    expect(errors).toEqual([]);
  });

  it('reports a worker that does not confirm, after the timeout, instead of hanging', async () => {
    const relay = new PrincipalChangeRelay(50);
    const cache = new PrincipalCache<string>(60_000);
    const [workerEnd, primaryEnd] = channelPair();
    relay.add(primaryEnd);
    joinPrincipalChanges(workerEnd, cache);
    relay.add(channelPair()[1]); // a worker that never answers
    const errors: unknown[] = [];
    await cache.changed((err) => errors.push(err));
    expect(String(errors[0])).toContain('1 worker(s) did not confirm');
  });
});

describe('threatmon serve --workers 2', () => {
  it('shares rate limits and metrics across workers, writes from both, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const server = startServer(port, { THREATMON_PLAN_LIMITS: 'enterprise=12', THREATMON_METRICS: 'true' });
    try {
      await waitForLog(server, /"role":"primary".*"msg":"listening"/);
      const url = `http://127.0.0.1:${port}`;
      // The first admin is created once, by the primary.
      expect(server.output().match(/Created organization "Default"/g)).toHaveLength(1);
      const login = await fetch(`${url}/api/v1/auth/token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
      expect(login.status).toBe(200);
      const { access } = (await login.json()) as { access: string };
      const auth = { authorization: `Bearer ${access}`, connection: 'close' };

      // New connections are dealt to the workers in turn; writes from both commit.
      const posts = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          fetch(`${url}/api/v1/incidents/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: `Cluster ${i}`, severity: 'low' }) }),
        ),
      );
      expect(posts.map((r) => r.status)).toEqual(Array(8).fill(201));
      // The access line is written as each answer goes out: wait for the eight to be read.
      const posted = () => [...server.output().matchAll(/"pid":(\d+),[^\n]*"method":"POST","url":"\/api\/v1\/incidents\/"/g)];
      for (let i = 0; i < 100_000 && posted().length < 8; i++) await new Promise((resolve) => setImmediate(resolve));
      const pids = new Set(posted().map((m) => m[1]));
      expect(pids.size).toBe(2);

      // 12 per minute for the organization, counted once across both workers: 8 used, 4 left.
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await fetch(`${url}/api/v1/incidents/?page_size=1`, { headers: auth })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);

      const list = await fetch(`${url}/api/v1/auth/me/`, { headers: auth });
      expect(list.status).toBe(429);
      const metrics = await (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text();
      const created = /threatmon_http_requests_total\{method="POST",route="\/api\/v1\/incidents\/",status="201"\} (\d+)/.exec(metrics);
      expect(Number(created?.[1])).toBe(8);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shutting down');
  }, 120_000);

  it('refuses a deactivated user at once on both workers, though both had remembered it', async () => {
    const port = await freePort();
    // Remembered for ten minutes: only the workers telling each other explains a refusal.
    const server = startServer(port, { THREATMON_PRINCIPAL_CACHE_MS: '600000' }, 'principals.db');
    try {
      await waitForLog(server, /"role":"primary".*"msg":"listening"/);
      const url = `http://127.0.0.1:${port}`;
      const token = async (username: string, password: string) => {
        const res = await fetch(`${url}/api/v1/auth/token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
        expect(res.status).toBe(200);
        return ((await res.json()) as { access: string }).access;
      };
      const admin = { authorization: `Bearer ${await token('admin', PASSWORD)}`, connection: 'close', 'content-type': 'application/json' };
      const created = await fetch(`${url}/api/v1/users/`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ username: 'remembered', email: 'remembered@example.com', password: 'remembered password 1', role: 'viewer' }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const viewer = { authorization: `Bearer ${await token('remembered', 'remembered password 1')}`, connection: 'close' };
      // New connections are dealt to the workers in turn: both remember the viewer.
      const before = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/api/v1/organization/`, { headers: viewer })));
      expect(before.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      // The access line is written as each answer goes out: wait for the four to be read.
      const lines = () => [...server.output().matchAll(/"pid":(\d+),[^\n]*"url":"\/api\/v1\/organization\/"/g)];
      for (let i = 0; i < 100_000 && lines().length < 4; i++) await new Promise((resolve) => setImmediate(resolve));
      const pids = new Set(lines().map((m) => m[1]));
      expect(pids.size).toBe(2);
      const patched = await fetch(`${url}/api/v1/users/${id}/`, { method: 'PATCH', headers: admin, body: JSON.stringify({ is_active: false }) });
      expect(patched.status).toBe(200);
      const after = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/api/v1/organization/`, { headers: viewer })));
      expect(after.map((r) => r.status)).toEqual([401, 401, 401, 401]);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
  }, 120_000);

  it('stops with status 1 when the workers cannot listen', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const server = startServer(port, {}, 'taken.db');
      expect(await server.exited).toBe(1);
      expect(server.output()).toContain('a worker failed to start');
    } finally {
      blocker.close();
    }
  }, 120_000);
});
