import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEY_FAILURES_PER_IP } from '../../src/modules/identity/api-keys.service.js';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, PASSWORD, type TestApp } from '../helpers/build-app.js';

/** What an API key may do about its creator's credentials, how high it may rise, and how guessing keys is slowed. */
describe('what an API key may do', () => {
  let t: TestApp;
  const m = {} as Record<Role, User>;

  const newKey = async (as: User, body: object = {}) => {
    const res = await t.as(as, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: `key ${Math.random()}`, ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res) as { id: string; key: string; role: Role };
  };
  const login = (user: User, password = PASSWORD) => t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: user.username, password } });

  beforeAll(async () => {
    t = await buildTestApp();
    Object.assign(m, (await t.createTeam('enterprise', 'key-limits', 'key-limits')).members);
  });
  afterAll(() => t.close());

  it('cannot change its creator\'s password, nor lock the creator out by guessing it', async () => {
    const { key } = await newKey(m.analyst, { role: 'viewer' });
    for (let i = 0; i < 12; i++) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: { authorization: `Bearer ${key}` }, payload: { current_password: `wrong guess ${i}`, new_password: 'a brand new passphrase' } });
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).detail).toContain('An API key cannot change a password');
    }
    const right = await t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: { authorization: `Bearer ${key}` }, payload: { current_password: PASSWORD, new_password: 'a brand new passphrase' } });
    expect(right.statusCode).toBe(403);
    // Nothing changed: the creator logs in with the old password, unthrottled.
    expect((await login(m.analyst)).statusCode).toBe(200);
  });

  it('cannot be raised above its creator\'s role, by anyone', async () => {
    const { id, key } = await newKey(m.analyst);
    const raised = await t.as(m.owner, { method: 'PATCH', url: `/api/v1/auth/api-keys/${id}/`, payload: { role: 'owner' } });
    expect(raised.statusCode, raised.body).toBe(403);
    expect(json(raised).detail).toBe("A key's role cannot be above its creator's (analyst).");
    const kept = await t.as(m.owner, { method: 'GET', url: `/api/v1/auth/api-keys/${id}/` });
    expect(json(kept).role).toBe('analyst');
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(200);
    // Lowered, then raised back to the creator's own role: allowed.
    expect((await t.as(m.owner, { method: 'PATCH', url: `/api/v1/auth/api-keys/${id}/`, payload: { role: 'viewer' } })).statusCode).toBe(200);
    expect((await t.as(m.owner, { method: 'PATCH', url: `/api/v1/auth/api-keys/${id}/`, payload: { role: 'analyst' } })).statusCode).toBe(200);
  });

  it('answers an unknown, malformed or revoked key 401 with WWW-Authenticate', async () => {
    const { id, key } = await newKey(m.admin);
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/auth/api-keys/${id}/` });
    for (const headers of [{ authorization: `Bearer ${key}` }, { authorization: 'Bearer tm_unknown' }, { 'x-api-key': 'not a key at all' }]) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers, remoteAddress: '192.0.2.80' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('throttles failed key authentications per address, as failed logins are', async () => {
    const guess = (i: number, remoteAddress: string) => t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer tm_guess${i}` }, remoteAddress });
    for (let i = 0; i < MAX_KEY_FAILURES_PER_IP; i++) expect((await guess(i, '198.51.100.7')).statusCode).toBe(401);
    const refused = await guess(MAX_KEY_FAILURES_PER_IP, '198.51.100.7');
    expect(refused.statusCode).toBe(429);
    expect(json(refused)).toMatchObject({ code: 'rate_limited', retry_after: expect.any(Number) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not slowed, nor a real key from it.
    expect((await guess(0, '198.51.100.8')).statusCode).toBe(401);
    const { key } = await newKey(m.viewer);
    expect((await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${key}` }, remoteAddress: '198.51.100.8' })).statusCode).toBe(200);
    // The window ends: guesses are looked up again.
    t.clock.advance(15 * 60 + 1);
    expect((await guess(0, '198.51.100.7')).statusCode).toBe(401);
  });
});
