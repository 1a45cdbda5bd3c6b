import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('pagination, filters, search and ordering', () => {
  let t: TestApp;
  let org: TestOrg;
  const users: User[] = [];

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg('enterprise', 'acme');
    // 12 users in all (the owner + 11), created a second apart so created_at orders them.
    for (let i = 0; i < 11; i++) {
      t.clock.advance(1);
      users.push(await t.createUser(org, i % 3 === 0 ? 'admin' : i % 3 === 1 ? 'analyst' : 'viewer', `user${String(i).padStart(2, '0')}`));
    }
  });
  afterAll(() => t.close());

  const list = (qs: string) => t.as(org.owner, { method: 'GET', url: `/api/v1/users/${qs}` });

  it('returns the envelope with absolute next/previous keeping other parameters', async () => {
    const res = await list('?page_size=5&role=admin,analyst,viewer,owner&page=2');
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body.count).toBe(12);
    expect(body.results).toHaveLength(5);
    expect(body.next).toBe('http://localhost:80/api/v1/users/?page_size=5&role=admin%2Canalyst%2Cviewer%2Cowner&page=3');
    expect(body.previous).toBe('http://localhost:80/api/v1/users/?page_size=5&role=admin%2Canalyst%2Cviewer%2Cowner&page=1');
  });

  it('defaults to newest first with 50 per page, and null links on a single page', async () => {
    const body = json(await list(''));
    expect(body.results).toHaveLength(12);
    expect(body.results[0].username).toBe('user10');
    expect(body.next).toBeNull();
    expect(body.previous).toBeNull();
  });

  it('answers 404 invalid_page past the last page, 200 for page 1 of nothing', async () => {
    const past = await list('?page=4&page_size=5');
    expect(past.statusCode).toBe(404);
    expect(json(past).code).toBe('invalid_page');
    const empty = await list('?search=nobody-has-this');
    expect(empty.statusCode).toBe(200);
    expect(json(empty)).toMatchObject({ count: 0, results: [], next: null, previous: null });
  });

  it('refuses a non-integer or < 1 page or page_size', async () => {
    for (const qs of ['?page=0', '?page=abc', '?page_size=0', '?page_size=1.5', '?page=-1']) {
      const res = await list(qs);
      expect(res.statusCode, qs).toBe(400);
      expect(json(res).code).toBe('invalid_query');
    }
  });

  it('clamps page_size above 500 to 500', async () => {
    const body = json(await list('?page_size=100000'));
    expect(body.results).toHaveLength(12);
  });

  it('filters by an enum comma list (OR) and combines filters with AND', async () => {
    const admins = json(await list('?role=admin'));
    expect(admins.results.every((u: User) => u.role === 'admin')).toBe(true);
    expect(admins.count).toBe(4);
    const two = json(await list('?role=admin,viewer'));
    expect(two.count).toBe(4 + 3);
    const none = json(await list('?role=admin&is_active=false'));
    expect(none.count).toBe(0);
  });

  it('refuses an invalid enum value naming the choices', async () => {
    const res = await list('?role=admin,boss');
    expect(res.statusCode).toBe(400);
    expect(json(res).detail).toBe('role: must be one of owner, admin, analyst, viewer');
    expect(json(res).errors).toEqual([{ field: 'role', message: 'must be one of owner, admin, analyst, viewer' }]);
  });

  it('searches case-insensitively, each word must match, and treats % and _ literally', async () => {
    expect(json(await list('?search=USER0')).count).toBe(10);
    expect(json(await list('?search=user1 example')).count).toBe(1);
    expect(json(await list('?search=user1 nowhere')).count).toBe(0);
    expect(json(await list('?search=%25')).count).toBe(0);
    expect(json(await list('?search=user_0')).count).toBe(0);
  });

  it('orders by a listed field, both ways, with an id tiebreak', async () => {
    const asc = json(await list('?ordering=username&page_size=3'));
    expect(asc.results.map((u: User) => u.username)).toEqual(['acme-owner', 'user00', 'user01']);
    const desc = json(await list('?ordering=-username&page_size=2'));
    expect(desc.results.map((u: User) => u.username)).toEqual(['user10', 'user09']);
  });

  it('never overlaps or skips across pages when the sort key ties', async () => {
    // Every user has the same is_active-free role sort key: page through by last_login_at (all null).
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const body = json(await list(`?ordering=last_login_at&page_size=3&page=${page}`));
      seen.push(...body.results.map((u: User) => u.id));
    }
    expect(new Set(seen).size).toBe(12);
  });

  it('refuses ordering by an unlisted field with invalid_query', async () => {
    const res = await list('?ordering=password_hash');
    expect(res.statusCode).toBe(400);
    expect(json(res).code).toBe('invalid_query');
  });

  it('filters by created_after/created_before and refuses a malformed date', async () => {
    const cut = users[5]!.created_at;
    const after = json(await list(`?created_after=${encodeURIComponent(cut)}`));
    expect(after.count).toBe(6);
    const before = json(await list(`?created_before=${encodeURIComponent(cut)}`));
    expect(before.count).toBe(6);
    expect(json(await list('?created_after=2026-11-23')).count).toBe(0);
    const bad = await list('?created_after=yesterday');
    expect(bad.statusCode).toBe(400);
    expect(json(bad).errors[0].field).toBe('created_after');
    // Of the right shape but no date: named too, not as `date`.
    for (const param of ['created_after', 'created_before']) {
      const impossible = await list(`?${param}=2020-13-45`);
      expect(impossible.statusCode).toBe(400);
      expect(json(impossible).errors).toEqual([{ field: param, message: '"2020-13-45" is not an ISO 8601 date' }]);
    }
  });

  it('builds next/previous from THREATMON_PUBLIC_URL when set, never from the Host header', async () => {
    const links = async (app: TestApp, host: string) =>
      json(await app.as(org.owner, { method: 'GET', url: '/api/v1/users/?page_size=5&page=2', headers: { host } }));
    const fromHost = await links(t, 'attacker.example');
    expect(fromHost.next).toMatch(/^http:\/\/attacker\.example\//);
    const pinned = await buildTestApp({ THREATMON_PUBLIC_URL: 'https://api.example.com/threatmon/' }, { database: { ...t.app.deps.database, close: async () => {} } });
    try {
      const body = await links(pinned, 'attacker.example');
      expect(body.next).toBe('https://api.example.com/threatmon/api/v1/users/?page_size=5&page=3');
      expect(body.previous).toBe('https://api.example.com/threatmon/api/v1/users/?page_size=5&page=1');
    } finally {
      await pinned.close();
    }
  });

  it('ignores unknown query parameters', async () => {
    expect((await list('?colour=blue')).statusCode).toBe(200);
  });
});

describe('ETag and conditional requests', () => {
  let t: TestApp;
  let org: TestOrg;
  let viewer: User;

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg();
    viewer = await t.createUser(org, 'viewer');
  });
  afterAll(() => t.close());

  it('gives a strong ETag and answers If-None-Match with 304', async () => {
    const res = await t.as(org.owner, { method: 'GET', url: `/api/v1/users/${viewer.id}/` });
    expect(res.headers.etag).toBe('"1"');
    const again = await t.as(org.owner, { method: 'GET', url: `/api/v1/users/${viewer.id}/`, headers: { 'if-none-match': '"1"' } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('applies a PATCH whose If-Match matches, bumping the ETag, and refuses a stale one with 412', async () => {
    const ok = await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${viewer.id}/`, headers: { 'if-match': '"1"' }, payload: { email: 'New@Example.com' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers.etag).toBe('"2"');
    expect(json(ok).email).toBe('new@example.com');
    const stale = await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${viewer.id}/`, headers: { 'if-match': '"1"' }, payload: { email: 'other@example.com' } });
    expect(stale.statusCode).toBe(412);
    expect(json(stale).code).toBe('precondition_failed');
    const now = json(await t.as(org.owner, { method: 'GET', url: `/api/v1/users/${viewer.id}/` }));
    expect(now.email).toBe('new@example.com');
  });
});
