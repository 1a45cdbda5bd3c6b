import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('API keys (API.md section 1)', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  const m = {} as Record<Role, User>;
  const lines: string[] = [];

  const create = async (as: User, body: object) => {
    const res = await t.as(as, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: body });
    return res;
  };
  const newKey = async (as: User, body: object = {}) => {
    const res = await create(as, { name: `key ${Math.random()}`, ...body });
    expect(res.statusCode).toBe(201);
    return json(res) as { id: string; key: string; prefix: string; role: Role };
  };
  const me = (headers: Record<string, string>, remoteAddress?: string) => t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers, ...(remoteAddress && { remoteAddress }) });
  const withoutIds = (body: string) => {
    const p = JSON.parse(body) as Record<string, unknown>;
    delete p.instance;
    delete p.request_id;
    return p;
  };

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_LOG_LEVEL: 'info' }, { logger: undefined, logStream: { write: (line: string) => void lines.push(line) } });
    const team = await t.createTeam('starter', 'keyed', 'keyed');
    org = team.org;
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'key-strangers');
  });
  afterAll(() => t.close());

  it('shows the key once, keeps only its hash, and answers it by each way of presenting it', async () => {
    const created = await newKey(m.analyst, { name: 'SIEM lookup' });
    expect(created.key).toMatch(/^tm_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ name: 'SIEM lookup', role: 'analyst', prefix: created.key.slice(0, 11), created_by: m.analyst.id, expires_at: null, last_used_at: null });
    const row = await t.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256(created.key));
    expect(JSON.stringify(row)).not.toContain(created.key);
    const read = json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/auth/api-keys/${created.id}/` }));
    expect(read).not.toHaveProperty('key');
    expect(read.prefix).toBe(created.key.slice(0, 11));

    const ways: Array<Record<string, string>> = [{ authorization: `Bearer ${created.key}` }, { 'x-api-key': created.key }, { 'hibp-api-key': created.key }];
    for (const headers of ways) {
      const res = await me(headers);
      expect(res.statusCode, JSON.stringify(Object.keys(headers))).toBe(200);
      expect(json(res).id).toBe(m.analyst.id);
    }
    expect(json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/auth/api-keys/${created.id}/` })).last_used_at).toBe(t.clock.now().toISOString());
    // Nothing logged holds it.
    expect(lines.join('\n')).not.toContain(created.key);
  });

  it('acts with its own role, never above its creator\'s', async () => {
    const viewerKey = await newKey(m.analyst, { role: 'viewer' });
    const monitor = { name: 'By key', type: 'domain', terms: ['by-key.example'], backfill: false };
    expect((await t.inject({ method: 'POST', url: '/api/v1/monitoring/', headers: { 'x-api-key': viewerKey.key }, payload: monitor })).statusCode).toBe(403);
    const analystKey = await newKey(m.analyst);
    expect((await t.inject({ method: 'POST', url: '/api/v1/monitoring/', headers: { 'x-api-key': analystKey.key }, payload: monitor })).statusCode).toBe(201);
    const above = await create(m.analyst, { name: 'too high', role: 'admin' });
    expect(above.statusCode).toBe(403);
    const past = await create(m.analyst, { name: 'expired already', expires_at: '2001-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
    expect(json(past).errors).toEqual([{ field: 'expires_at', message: 'must be a date-time in the future' }]);
    // A key does not make keys.
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/api-keys/', headers: { 'x-api-key': analystKey.key }, payload: { name: 'child' } })).statusCode).toBe(403);
  });

  it('answers an unknown and a revoked key alike, and a revoked one stops at once', async () => {
    const key = await newKey(m.viewer);
    expect((await me({ 'x-api-key': key.key })).statusCode).toBe(200);
    const revoked = await t.as(m.viewer, { method: 'DELETE', url: `/api/v1/auth/api-keys/${key.id}/` });
    expect(revoked.statusCode).toBe(204);
    const afterRevoke = await me({ 'x-api-key': key.key });
    const unknown = await me({ 'x-api-key': `tm_${'A'.repeat(43)}` });
    expect(afterRevoke.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(withoutIds(afterRevoke.body)).toEqual(withoutIds(unknown.body));
    expect(afterRevoke.headers['content-type']).toContain('application/problem+json');
  });

  it('ends at its expiry, and when its creator is deactivated, demoted below it, or removed', async () => {
    const expiring = await newKey(m.viewer, { expires_at: new Date(t.clock.now().getTime() + 3600_000).toISOString() });
    expect((await me({ 'x-api-key': expiring.key })).statusCode).toBe(200);
    t.clock.advance(3601);
    expect((await me({ 'x-api-key': expiring.key })).statusCode).toBe(401);

    const worker = await t.createUser(org, 'analyst');
    const analystKey = await newKey(worker, { role: 'analyst' });
    const viewerKey = await newKey(worker, { role: 'viewer' });
    const patch = (body: object) => t.as(m.admin, { method: 'PATCH', url: `/api/v1/users/${worker.id}/`, payload: body });
    expect((await patch({ role: 'viewer' })).statusCode).toBe(200);
    expect((await me({ 'x-api-key': analystKey.key })).statusCode).toBe(401);
    expect((await me({ 'x-api-key': viewerKey.key })).statusCode).toBe(200);
    expect((await patch({ is_active: false })).statusCode).toBe(200);
    expect((await me({ 'x-api-key': viewerKey.key })).statusCode).toBe(401);
    expect((await patch({ is_active: true })).statusCode).toBe(200);
    expect((await me({ 'x-api-key': viewerKey.key })).statusCode).toBe(200);
    expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/users/${worker.id}/` })).statusCode).toBe(204);
    expect((await me({ 'x-api-key': viewerKey.key })).statusCode).toBe(401);
  });

  it('lists your own keys, an admin the organization\'s, and hides them from other organizations (404)', async () => {
    const mine = await newKey(m.viewer, { name: 'viewer listed' });
    const listed = (as: User) => t.as(as, { method: 'GET', url: '/api/v1/auth/api-keys/?page_size=100' }).then((r) => (json(r).results as Array<{ id: string; created_by: string }>));
    const viewerSees = await listed(m.viewer);
    expect(viewerSees.every((k) => k.created_by === m.viewer.id)).toBe(true);
    expect(viewerSees.map((k) => k.id)).toContain(mine.id);
    const adminSees = await listed(m.admin);
    expect(new Set(adminSees.map((k) => k.created_by))).toEqual(new Set([m.analyst.id, m.viewer.id]));
    expect((await t.as(m.analyst, { method: 'GET', url: `/api/v1/auth/api-keys/${mine.id}/` })).statusCode).toBe(404);
    expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/auth/api-keys/${mine.id}/` })).statusCode).toBe(404);
    expect((await t.as(other.owner, { method: 'DELETE', url: `/api/v1/auth/api-keys/${mine.id}/` })).statusCode).toBe(404);
    const renamed = await t.as(m.admin, { method: 'PATCH', url: `/api/v1/auth/api-keys/${mine.id}/`, payload: { name: 'renamed' } });
    expect(json(renamed).name).toBe('renamed');
    expect((await t.as(m.viewer, { method: 'PATCH', url: `/api/v1/auth/api-keys/${mine.id}/`, payload: { role: 'analyst' } })).statusCode).toBe(403);
  });

  it('counts requests by key against the organization\'s plan limit', async () => {
    const key = await newKey(m.viewer);
    const byToken = await t.as(m.viewer, { method: 'GET', url: '/api/v1/auth/me/' });
    const byKey = await me({ 'x-api-key': key.key });
    expect(Number(byKey.headers['ratelimit-limit'])).toBe(t.config.planLimits.starter);
    expect(Number(byKey.headers['ratelimit-remaining'])).toBeLessThan(Number(byToken.headers['ratelimit-remaining']));
  });

  it('audits creation, revocation and use from a new address, once per address', async () => {
    const key = await newKey(m.analyst, { name: 'audited' });
    await me({ 'x-api-key': key.key }, '198.51.100.7');
    await me({ 'x-api-key': key.key }, '198.51.100.7');
    await me({ 'x-api-key': key.key }, '198.51.100.8');
    await t.as(m.analyst, { method: 'DELETE', url: `/api/v1/auth/api-keys/${key.id}/` });
    const entries = await t.db.selectFrom('audit_log').select(['action', 'ip', 'actor_id', 'changes']).where('target_id', '=', key.id).orderBy('created_at').orderBy('id').execute();
    expect(entries.map((e) => [e.action, e.action === 'api_key.new_ip' ? e.ip : null])).toEqual([
      ['api_key.created', null],
      ['api_key.new_ip', '198.51.100.7'],
      ['api_key.new_ip', '198.51.100.8'],
      ['api_key.revoked', null],
    ]);
    expect(entries.every((e) => e.actor_id === m.analyst.id)).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(key.key);
  });
});
