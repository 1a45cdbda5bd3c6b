import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgListener } from '../../src/db/pg-listener.js';
import { hashPassword } from '../../src/modules/identity/passwords.js';
import { PrincipalCache } from '../../src/runtime/principal-cache.js';
import { buildTestApp, json, PASSWORD, TEST_PG_URL, type TestApp, type TestOrg } from '../helpers/build-app.js';

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('PrincipalCache', () => {
  it('remembers for ttlMs, and not at all with 0', () => {
    let now = 0;
    const cache = new PrincipalCache<string>(1000, () => now);
    cache.put('u', 'alice', cache.mark());
    expect(cache.get('u')).toBe('alice');
    now = 999;
    expect(cache.get('u')).toBe('alice');
    now = 1000;
    expect(cache.get('u')).toBeUndefined();
    const off = new PrincipalCache<string>(0, () => now);
    off.put('u', 'alice', off.mark());
    expect(off.get('u')).toBeUndefined();
  });

  it('does not keep a principal read before a clear: it may be older than the change', () => {
    const cache = new PrincipalCache<string>(60_000);
    const mark = cache.mark();
    cache.clear(); // a change committed while the principal was being read
    cache.put('u', 'stale', mark);
    expect(cache.get('u')).toBeUndefined();
    cache.put('u', 'fresh', cache.mark());
    expect(cache.get('u')).toBe('fresh');
  });

  it('serves nothing while untrusted, and forgets on both transitions', () => {
    const cache = new PrincipalCache<string>(60_000);
    cache.put('u', 'alice', cache.mark());
    cache.setTrusted(false);
    expect(cache.get('u')).toBeUndefined();
    cache.put('u', 'alice', cache.mark());
    expect(cache.get('u')).toBeUndefined();
    cache.setTrusted(true);
    cache.put('u', 'alice', cache.mark());
    expect(cache.get('u')).toBe('alice');
  });

  it('holds at most maxEntries, dropping the oldest', () => {
    const cache = new PrincipalCache<number>(60_000, undefined, 2);
    for (const [i, id] of ['a', 'b', 'c'].entries()) cache.put(id, i, cache.mark());
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 1, 2]);
  });

  it('changed() forgets here, waits for every peer, and reports one that fails without throwing', async () => {
    const cache = new PrincipalCache<string>(60_000);
    cache.put('u', 'alice', cache.mark());
    const told: string[] = [];
    let release!: () => void;
    cache.addPeer(() => new Promise<void>((resolve) => (release = () => (told.push('slow'), resolve()))));
    cache.addPeer(async () => {
      throw new Error('peer down');
    });
    const errors: unknown[] = [];
    const done = cache.changed((err) => errors.push(err));
    expect(cache.get('u')).toBeUndefined();
    let settled = false;
    void done.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    release();
    await done;
    expect(told).toEqual(['slow']);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('peer down');
  });
});

describe('remembered principals in the API', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    // Long enough that only an announced change can explain a principal being read again.
    t = await buildTestApp({ THREATMON_PRINCIPAL_CACHE_MS: '600000' });
    org = await t.createOrg('starter', `pc-${randomBytes(3).toString('hex')}`);
  });
  afterAll(() => t.close());

  it('are remembered: a change that bypasses the API is not seen until the cache is emptied', async () => {
    const user = await t.createUser(org, 'viewer');
    const token = await t.token(user);
    const me = () => t.inject({ method: 'GET', url: '/api/v1/organization/', headers: { authorization: `Bearer ${token}` } });
    expect((await me()).statusCode).toBe(200);
    await t.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
    expect((await me()).statusCode).toBe(200);
    t.app.deps.principals.clear();
    expect((await me()).statusCode).toBe(401);
  });

  it('read every time with THREATMON_PRINCIPAL_CACHE_MS=0', async () => {
    const other = await buildTestApp({ THREATMON_PRINCIPAL_CACHE_MS: '0' });
    try {
      const o = await other.createOrg('starter');
      const user = await other.createUser(o, 'viewer');
      const token = await other.token(user);
      const me = () => other.inject({ method: 'GET', url: '/api/v1/organization/', headers: { authorization: `Bearer ${token}` } });
      expect((await me()).statusCode).toBe(200);
      await other.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
      expect((await me()).statusCode).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('a user deactivated through the API is refused at once though remembered', async () => {
    const user = await t.createUser(org, 'analyst');
    const token = await t.token(user);
    const get = () => t.inject({ method: 'GET', url: '/api/v1/organization/', headers: { authorization: `Bearer ${token}` } });
    expect((await get()).statusCode).toBe(200);
    expect((await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { is_active: false } })).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(401);
  });

  it('a demotion through the API takes effect at once, and a removal too', async () => {
    const user = await t.createUser(org, 'admin');
    const token = await t.token(user);
    const users = () => t.inject({ method: 'GET', url: '/api/v1/users/', headers: { authorization: `Bearer ${token}` } });
    expect((await users()).statusCode).toBe(200);
    expect((await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { role: 'viewer' } })).statusCode).toBe(200);
    expect((await users()).statusCode).toBe(403);
    expect((await t.as(org.owner, { method: 'DELETE', url: `/api/v1/users/${user.id}/` })).statusCode).toBe(204);
    expect((await users()).statusCode).toBe(401);
  });

  it("a plan change through the API sets the organization's rate limit at once", async () => {
    const o = await t.createOrg('starter');
    const limit = async () => (await t.as(o.owner, { method: 'GET', url: '/api/v1/organization/' })).headers['ratelimit-limit'];
    expect(await limit()).toBe('100');
    expect((await t.as(o.owner, { method: 'PATCH', url: '/api/v1/organization/', payload: { plan: 'enterprise' } })).statusCode).toBe(200);
    expect(await limit()).toBe('2000');
  });

  it('/auth/me/ shows the stored user (last login), not the remembered one', async () => {
    const user = await t.createUser(org, 'viewer');
    const token = await t.token(user);
    const me = async () => json(await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${token}` } }));
    expect((await me()).last_login_at).toBeNull();
    const login = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: user.username, password: PASSWORD } });
    expect(login.statusCode).toBe(200);
    expect((await me()).last_login_at).toBe(t.clock.now().toISOString());
  });

  it('a password change checks the stored password, not the remembered one', async () => {
    const user = await t.createUser(org, 'viewer');
    const token = await t.token(user);
    const change = (current: string, next: string) =>
      t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: { authorization: `Bearer ${token}` }, payload: { current_password: current, new_password: next } });
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    // Changed behind the API's back: the remembered principal still holds the old hash, which PASSWORD matches.
    await t.db.updateTable('users').set({ password_hash: await hashPassword('changed elsewhere 123') }).where('id', '=', user.id).execute();
    expect(t.app.deps.principals.get(user.id)).toBeDefined();
    expect((await change(PASSWORD, 'a quite different passphrase')).statusCode).toBe(400);
    expect((await change('changed elsewhere 123', 'a quite different passphrase')).statusCode).toBe(204);
  });
});

describe.skipIf(!TEST_PG_URL)('remembered principals across nodes (PostgreSQL NOTIFY)', () => {
  let a: TestApp;
  let b: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    a = await buildTestApp({ THREATMON_PRINCIPAL_CACHE_MS: '600000' });
    // A second node on the same database, with its own memory.
    b = await buildTestApp({ THREATMON_PRINCIPAL_CACHE_MS: '600000', THREATMON_DATABASE_URL: a.config.databaseUrl });
    org = await a.createOrg('starter', `pn-${randomBytes(3).toString('hex')}`);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a user deactivated on one node is refused by the other, which had remembered it', async () => {
    const user = await a.createUser(org, 'viewer');
    const token = await a.token(user);
    const onB = () => b.inject({ method: 'GET', url: '/api/v1/organization/', headers: { authorization: `Bearer ${token}` } });
    expect((await onB()).statusCode).toBe(200);
    expect(b.app.deps.principals.get(user.id)).toBeDefined();
    expect((await a.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { is_active: false } })).statusCode).toBe(200);
    await waitFor('node b to forget', () => b.app.deps.principals.get(user.id) === undefined);
    expect((await onB()).statusCode).toBe(401);
  });

  it('an API key revoked on one node is refused by the other, which had remembered it', async () => {
    const user = await a.createUser(org, 'analyst');
    const created = JSON.parse((await a.as(user, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'two nodes' } })).body);
    const cached = `key:${createHash('sha256').update(created.key).digest('hex')}`;
    const onB = () => b.inject({ method: 'GET', url: '/api/v1/organization/', headers: { 'x-api-key': created.key } });
    expect((await onB()).statusCode).toBe(200);
    expect(b.app.deps.principals.get(cached)).toBeDefined();
    expect((await a.as(user, { method: 'DELETE', url: `/api/v1/auth/api-keys/${created.id}/` })).statusCode).toBe(204);
    await waitFor('node b to forget', () => b.app.deps.principals.get(cached) === undefined);
    expect((await onB()).statusCode).toBe(401);
  });

  it('an API key whose creator is demoted below it on one node is refused by the other', async () => {
    const user = await a.createUser(org, 'analyst');
    const created = JSON.parse((await a.as(user, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'demoted' } })).body);
    const cached = `key:${createHash('sha256').update(created.key).digest('hex')}`;
    const onB = () => b.inject({ method: 'GET', url: '/api/v1/organization/', headers: { 'x-api-key': created.key } });
    expect((await onB()).statusCode).toBe(200);
    expect(b.app.deps.principals.get(cached)).toBeDefined();
    expect((await a.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { role: 'viewer' } })).statusCode).toBe(200);
    await waitFor('node b to forget', () => b.app.deps.principals.get(cached) === undefined);
    expect((await onB()).statusCode).toBe(401);
  });

  it('a logout on one node ends the access token on the other, which had remembered its user', async () => {
    const user = await a.createUser(org, 'viewer');
    const pair = JSON.parse((await a.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: user.username, password: PASSWORD } })).body);
    const onB = () => b.inject({ method: 'GET', url: '/api/v1/organization/', headers: { authorization: `Bearer ${pair.access}` } });
    expect((await onB()).statusCode).toBe(200);
    expect(b.app.deps.principals.get(user.id)).toBeDefined();
    expect((await a.inject({ method: 'POST', url: '/api/v1/auth/token/revoke/', payload: { refresh: pair.refresh } })).statusCode).toBe(204);
    await waitFor('node b to forget', () => b.app.deps.principals.get(user.id) === undefined);
    expect((await onB()).statusCode).toBe(401);
  });
});

describe.skipIf(!TEST_PG_URL)('PgListener', () => {
  it('delivers NOTIFYs, and after its connection is killed reports down, reconnects and delivers again', async () => {
    const channel = `t_${randomBytes(4).toString('hex')}`;
    const name = `threatmon test ${channel}`;
    const events: string[] = [];
    const listener = new PgListener(TEST_PG_URL!, channel, {
      notify: (payload) => events.push(`notify ${payload}`),
      up: () => events.push('up'),
      down: () => events.push('down'),
    }, name);
    const admin = new pg.Client({ connectionString: TEST_PG_URL });
    await admin.connect();
    try {
      await listener.ready;
      await admin.query('select pg_notify($1, $2)', [channel, 'one']);
      await waitFor('the first notification', () => events.includes('notify one'));
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name]);
      await waitFor('a reconnection', () => events.filter((e) => e === 'up').length === 2);
      await admin.query('select pg_notify($1, $2)', [channel, 'two']);
      await waitFor('the second notification', () => events.includes('notify two'));
      expect(events).toEqual(['up', 'notify one', 'down', 'up', 'notify two']);
    } finally {
      await listener.close();
      await admin.end();
    }
  });
});
