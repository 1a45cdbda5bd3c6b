import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { MemoryCounterStore, RedisCounterStore } from '../../src/runtime/counters.js';
import { buildTestApp, json, TEST_REDIS_URL, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('plan rate limits (in memory)', () => {
  let t: TestApp;
  let starter: TestOrg;

  beforeAll(async () => {
    t = await buildTestApp();
    starter = await t.createOrg('starter', 'small');
  });
  afterAll(() => t.close());

  it('answers the 101st request of a starter organization in a minute with 429, any endpoint counting', async () => {
    const token = await t.token(starter.owner);
    const get = (url: string) => t.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    for (let i = 1; i <= 100; i++) {
      const res = await get(i % 2 ? '/api/v1/auth/me/' : '/api/v1/organization/');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('100');
      expect(res.headers['ratelimit-remaining']).toBe(String(100 - i));
      expect(res.headers['ratelimit-policy']).toBe('100;w=60');
    }
    const over = await get('/api/v1/auth/me/');
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('60');
    expect(over.headers['ratelimit-remaining']).toBe('0');
    expect(json(over)).toMatchObject({ code: 'rate_limited', retry_after: 60 });
    // 429s do not count, and the window is fixed from its first request.
    t.clock.advance(30);
    expect(json(await get('/api/v1/auth/me/')).retry_after).toBe(30);
    t.clock.advance(30);
    const fresh = await get('/api/v1/auth/me/');
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['ratelimit-remaining']).toBe('99');
  });

  it('counts per organization, not per user, and not unauthenticated requests', async () => {
    const org = await t.createOrg('starter');
    const a = await t.createUser(org, 'viewer');
    for (let i = 0; i < 3; i++) await t.as(a, { method: 'GET', url: '/api/v1/auth/me/' });
    await t.inject({ method: 'GET', url: '/health/' });
    await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: 'x', password: 'y' } });
    const res = await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
    expect(res.headers['ratelimit-remaining']).toBe('96');
  });

  it('applies a plan change at once', async () => {
    const org = await t.createOrg('starter');
    const first = await t.as(org.owner, { method: 'PATCH', url: '/api/v1/organization/', payload: { plan: 'professional' } });
    expect(first.headers['ratelimit-limit']).toBe('100');
    const next = await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
    expect(next.headers['ratelimit-limit']).toBe('500');
    expect(next.headers['ratelimit-remaining']).toBe('498');
  });
});

describe('rate limit configuration', () => {
  it('takes per-plan limits from THREATMON_PLAN_LIMITS', async () => {
    const t = await buildTestApp({ THREATMON_PLAN_LIMITS: 'starter=2' });
    const org = await t.createOrg('starter');
    expect((await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' })).statusCode).toBe(200);
    expect((await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' })).statusCode).toBe(200);
    expect((await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' })).statusCode).toBe(429);
    await t.close();
  });

  it('turns off with THREATMON_RATE_LIMITS=off: no headers, no 429', async () => {
    const t = await buildTestApp({ THREATMON_RATE_LIMITS: 'off', THREATMON_PLAN_LIMITS: 'starter=1' });
    const org = await t.createOrg('starter');
    for (let i = 0; i < 3; i++) {
      const res = await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
    await t.close();
  });
});

describe('memory counter store', () => {
  it('opens a window on the first hit, refuses without counting at the limit, and forgets expired windows', async () => {
    let now = 0;
    const store = new MemoryCounterStore(() => now);
    expect(await store.hit('k', 2, 1000)).toEqual({ count: 1, allowed: true, resetMs: 1000 });
    now = 400;
    expect(await store.hit('k', 2, 1000)).toEqual({ count: 2, allowed: true, resetMs: 600 });
    expect(await store.hit('k', 2, 1000)).toEqual({ count: 2, allowed: false, resetMs: 600 });
    now = 1000;
    expect(await store.hit('k', 2, 1000)).toEqual({ count: 1, allowed: true, resetMs: 1000 });
  });
});

describe.skipIf(!TEST_REDIS_URL)('rate limits in Redis', () => {
  it('shares one count between two app instances', async () => {
    const a = await buildTestApp({ THREATMON_REDIS_URL: TEST_REDIS_URL!, THREATMON_PLAN_LIMITS: 'starter=5' });
    // Instance b reads the same database as a: two API nodes in front of one store.
    const b = await buildTestApp(
      { THREATMON_REDIS_URL: TEST_REDIS_URL!, THREATMON_PLAN_LIMITS: 'starter=5' },
      { database: a.app.deps.database.dialect === 'sqlite' ? sharedDatabase(a) : undefined },
    );
    const org = await a.createOrg('starter', `redis-${randomBytes(4).toString('hex')}`);
    if (a.app.deps.database.dialect === 'postgres') {
      // b has its own schema: give it the same organization and user rows.
      const orgRow = await a.db.selectFrom('organizations').selectAll().where('id', '=', org.id).executeTakeFirstOrThrow();
      const userRow = await a.db.selectFrom('users').selectAll().where('id', '=', org.owner.id).executeTakeFirstOrThrow();
      await b.db.insertInto('organizations').values(orgRow).execute();
      await b.db.insertInto('users').values(userRow).execute();
    }
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const node = i % 2 ? b : a;
      statuses.push((await node.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const health = json(await a.inject({ method: 'GET', url: '/health/' }));
    expect(health.redis).toBe('ok');
    await b.close();
    await a.close();
  });

  it('fails open when Redis is unreachable, and health says so', async () => {
    const errors: unknown[] = [];
    const t = await buildTestApp({ THREATMON_REDIS_URL: 'redis://127.0.0.1:1', THREATMON_PLAN_LIMITS: 'starter=1' }, { onRedisError: (e) => errors.push(e) });
    const org = await t.createOrg('starter');
    for (let i = 0; i < 3; i++) expect((await t.as(org.owner, { method: 'GET', url: '/api/v1/auth/me/' })).statusCode).toBe(200);
    expect(errors.length).toBeGreaterThan(0);
    const health = await t.inject({ method: 'GET', url: '/health/' });
    expect(health.statusCode).toBe(200);
    expect(json(health).redis).toBe('unavailable');
    await t.close();
  });

  it('throttles logins over two nodes sharing Redis: 16 concurrent wrong passwords, exactly 10 answered 401', async () => {
    const a = await buildTestApp({ THREATMON_REDIS_URL: TEST_REDIS_URL! });
    const b = await buildTestApp({ THREATMON_REDIS_URL: TEST_REDIS_URL! }, { database: a.app.deps.database.dialect === 'sqlite' ? sharedDatabase(a) : undefined });
    try {
      const username = `redis-thr-${randomBytes(4).toString('hex')}`;
      const attempt = (i: number) =>
        (i % 2 ? b : a).inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username, password: 'wrong password!' }, remoteAddress: `10.9.0.${i}` });
      const statuses = (await Promise.all(Array.from({ length: 16 }, (_, i) => attempt(i)))).map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 401)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('gives a hit back: the window closes with its last hit', async () => {
    const store = new RedisCounterStore(TEST_REDIS_URL!, `test:${randomBytes(4).toString('hex')}:`);
    await store.hit('k', 10, 60_000);
    await store.hit('k', 10, 60_000);
    await store.release('k');
    expect((await store.peek('k')).count).toBe(1);
    await store.release('k');
    expect(await store.peek('k')).toEqual({ count: 0, resetMs: 0 });
    await store.close();
  });

  it('counts atomically under concurrency', async () => {
    const store = new RedisCounterStore(TEST_REDIS_URL!, `test:${randomBytes(4).toString('hex')}:`);
    const hits = await Promise.all(Array.from({ length: 50 }, () => store.hit('k', 20, 60_000)));
    expect(hits.filter((h) => h.allowed)).toHaveLength(20);
    expect((await store.peek('k')).count).toBe(20);
    await store.close();
  });

  it('takes blocks of a large plan limit: two nodes never allow more than the limit, in few round trips', async () => {
    const prefix = `test:${randomBytes(4).toString('hex')}:`;
    const nodes = [new RedisCounterStore(TEST_REDIS_URL!, prefix), new RedisCounterStore(TEST_REDIS_URL!, prefix)];
    const takes = nodes.map((n) => vi.spyOn(n.redis as unknown as { threatmonTake: (...args: unknown[]) => Promise<unknown> }, 'threatmonTake'));
    const hitsOf = async (node: RedisCounterStore, n: number) => {
      let allowed = 0;
      for (let i = 0; i < n; i++) if ((await node.hit('plan', 5_000, 60_000, { countAhead: true })).allowed) allowed++;
      return allowed;
    };
    // Both nodes at once, concurrently. Never more than the limit; fewer only by what a node took
    // and had no request left to spend (at most one block of 64 each).
    const allowed = await Promise.all(nodes.map((n) => hitsOf(n, 3_000)));
    expect(allowed[0]! + allowed[1]!).toBeLessThanOrEqual(5_000);
    expect(allowed[0]! + allowed[1]!).toBeGreaterThanOrEqual(5_000 - 2 * 64);
    expect((await nodes[0]!.peek('plan')).count).toBe(5_000);
    const roundTrips = takes.reduce((sum, t) => sum + t.mock.calls.length, 0);
    expect(roundTrips).toBeGreaterThan(0);
    expect(roundTrips).toBeLessThan(600);
    // One hit at a time only for the last 256 of the window (and a refusal per node).
    const oneByOne = takes.reduce((sum, t) => sum + t.mock.calls.filter((args) => args[3] === 1).length, 0);
    expect(oneByOne).toBeLessThanOrEqual(256 + 2);
    // Small limits (and the login throttle, which never counts ahead) stay one round trip per hit.
    expect((await nodes[0]!.hit('small', 3, 60_000, { countAhead: true })).count).toBe(1);
    expect((await nodes[1]!.hit('small', 3, 60_000, { countAhead: true })).count).toBe(2);
    for (const n of nodes) await n.close();
  });
});

/** Two apps over one SQLite file would need a file; in-memory SQLite is per connection, so share the object. */
function sharedDatabase(a: TestApp) {
  const db = a.app.deps.database;
  // The second app must not close the first's database on its own close.
  return { ...db, close: async () => {} } satisfies ReturnType<typeof createDatabase>;
}
