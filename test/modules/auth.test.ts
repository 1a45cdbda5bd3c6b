import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, JWT_SECRET, json, PASSWORD, type TestApp, type TestOrg } from '../helpers/build-app.js';

const login = (t: TestApp, username: string, password = PASSWORD, ip = '10.0.0.1') =>
  t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username, password }, remoteAddress: ip });

function b64(obj: object) {
  return Buffer.from(JSON.stringify(obj)).toString('base64url');
}

describe('tokens', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg('starter', 'tok');
  });
  afterAll(() => t.close());

  it('logs in with username and password and returns a Bearer pair with the documented claims', async () => {
    const res = await login(t, org.owner.username);
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    const claims = JSON.parse(Buffer.from(body.access.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: org.owner.id, org: org.id, role: 'owner', type: 'access', iss: 'threatmon', aud: 'threatmon-api' });
    expect(claims.exp - claims.iat).toBe(900);
    expect(claims.jti).toBeTruthy();
    const refreshClaims = JSON.parse(Buffer.from(body.refresh.split('.')[1], 'base64url').toString());
    expect(refreshClaims.type).toBe('refresh');
    expect(refreshClaims.exp - refreshClaims.iat).toBe(7 * 86400);
    const me = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${body.access}` } });
    expect(me.statusCode).toBe(200);
    expect(json(me)).toMatchObject({ username: org.owner.username, role: 'owner', organization: { id: org.id, name: 'tok', plan: 'starter', member_count: 1, rate_limit_per_minute: 100 } });
    expect(me.body).not.toContain('password');
  });

  it('answers unknown user and wrong password with the same 401 invalid_credentials', async () => {
    const wrong = await login(t, org.owner.username, 'not the password at all');
    const unknown = await login(t, 'nobody-here', 'not the password at all');
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(json(res)).toMatchObject({ code: 'invalid_credentials', detail: 'No active account found with the given credentials.' });
    }
  });

  it('answers 401 not_authenticated without a token, with WWW-Authenticate', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me/' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(json(res).code).toBe('not_authenticated');
  });

  it('refuses a tampered signature, alg none, another algorithm, and garbage', async () => {
    const good = await t.token(org.owner);
    const [h, p] = good.split('.');
    const tampered = `${h}.${b64({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), role: 'owner', org: 'x' })}.${good.split('.')[2]}`;
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`;
    const hs512 = await new SignJWT({ org: org.id, role: 'owner', type: 'access' })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject(org.owner.id)
      .setJti('x')
      .setIssuedAt(Math.floor(t.clock.now().getTime() / 1000))
      .setExpirationTime('15m')
      .setIssuer('threatmon')
      .setAudience('threatmon-api')
      .sign(new TextEncoder().encode(JWT_SECRET));
    for (const token of [tampered, none, hs512, 'garbage', `${good}x`]) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, token).toBe(401);
      expect(json(res).code).toBe('token_invalid');
    }
  });

  it('expires access tokens after 15 minutes, with 30 s leeway', async () => {
    const token = await t.token(org.owner);
    const me = () => t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${token}` } });
    t.clock.advance(15 * 60 + 20);
    expect((await me()).statusCode).toBe(200);
    t.clock.advance(20);
    const res = await me();
    expect(res.statusCode).toBe(401);
    expect(json(res).code).toBe('token_expired');
  });

  it('refuses a refresh token used as an access token, and the reverse', async () => {
    const pair = json(await login(t, org.owner.username));
    const asAccess = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${pair.refresh}` } });
    expect(asAccess.statusCode).toBe(401);
    expect(json(asAccess).code).toBe('token_invalid');
    const asRefresh = await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: pair.access } });
    expect(asRefresh.statusCode).toBe(401);
  });

  it('rotates refresh tokens and revokes the whole family when a used one comes back', async () => {
    const first = json(await login(t, org.owner.username));
    const r1 = await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: first.refresh } });
    expect(r1.statusCode).toBe(200);
    const second = json(r1);
    expect(second.refresh).not.toBe(first.refresh);
    expect(second).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    // The first refresh token is now spent: presenting it again is reuse.
    const reuse = await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: first.refresh } });
    expect(reuse.statusCode).toBe(401);
    // ...and it took the legitimate successor down with it.
    const successor = await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: second.refresh } });
    expect(successor.statusCode).toBe(401);
    // Both presentations of a revoked token are recorded: the replay, then the revoked successor.
    const audit = await t.db.selectFrom('audit_log').select('action').where('action', '=', 'auth.refresh_reuse_detected').execute();
    expect(audit).toHaveLength(2);
  });

  it('verifies tokens: 200 {} for a valid one, 401 for a revoked refresh token', async () => {
    const pair = json(await login(t, org.owner.username));
    const ok = await t.inject({ method: 'POST', url: '/api/v1/auth/token/verify/', payload: { token: pair.access } });
    expect(ok.statusCode).toBe(200);
    expect(json(ok)).toEqual({});
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/verify/', payload: { token: pair.refresh } })).statusCode).toBe(200);
    const revoked = await t.inject({ method: 'POST', url: '/api/v1/auth/token/revoke/', payload: { refresh: pair.refresh } });
    expect(revoked.statusCode).toBe(204);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/verify/', payload: { token: pair.refresh } })).statusCode).toBe(401);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/verify/', payload: { token: 'nope' } })).statusCode).toBe(401);
  });

  it('revokes idempotently (logout) and a revoked refresh no longer refreshes', async () => {
    const pair = json(await login(t, org.owner.username));
    for (let i = 0; i < 2; i++) {
      expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/revoke/', payload: { refresh: pair.refresh } })).statusCode).toBe(204);
    }
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: pair.refresh } })).statusCode).toBe(401);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/revoke/', payload: { refresh: 'garbage' } })).statusCode).toBe(401);
  });

  it('changes the password: checks the current one and the policy, and revokes refresh tokens', async () => {
    const user = await t.createUser(org, 'analyst', 'pw-changer');
    const pair = json(await login(t, 'pw-changer'));
    const access = { authorization: `Bearer ${pair.access}` };
    const wrong = await t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: access, payload: { current_password: 'nope', new_password: 'a brand new passphrase' } });
    expect(wrong.statusCode).toBe(400);
    expect(json(wrong).errors[0].field).toBe('current_password');
    const short = await t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: access, payload: { current_password: PASSWORD, new_password: 'short' } });
    expect(short.statusCode).toBe(400);
    expect(json(short).errors).toEqual([{ field: 'new_password', message: 'must be at least 12 characters' }]);
    const ok = await t.inject({ method: 'POST', url: '/api/v1/auth/password/', headers: access, payload: { current_password: PASSWORD, new_password: 'a brand new passphrase' } });
    expect(ok.statusCode).toBe(204);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: pair.refresh } })).statusCode).toBe(401);
    expect((await login(t, user.username)).statusCode).toBe(401);
    expect((await login(t, user.username, 'a brand new passphrase')).statusCode).toBe(200);
  });

  it('refuses a new password found by the breach check', async () => {
    t.services.hooks.on('auth.breachCheck', async (pw) => pw === 'breached passphrase 1');
    const res = await t.as(org.owner, { method: 'POST', url: '/api/v1/auth/password/', payload: { current_password: PASSWORD, new_password: 'breached passphrase 1' } });
    expect(res.statusCode).toBe(400);
    expect(json(res).errors).toEqual([{ field: 'new_password', message: 'appears in a known breach' }]);
  });

  it('stops a deactivated user at once and revokes its refresh tokens', async () => {
    const victim = await t.createUser(org, 'viewer', 'soon-gone');
    const pair = json(await login(t, 'soon-gone'));
    const res = await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${victim.id}/`, payload: { is_active: false } });
    expect(res.statusCode).toBe(200);
    const me = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${pair.access}` } });
    expect(me.statusCode).toBe(401);
    expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: pair.refresh } })).statusCode).toBe(401);
    expect((await login(t, 'soon-gone')).statusCode).toBe(401);
  });

  describe('sessions that end (logout, password change, reuse, deactivation) end their access tokens', () => {
    const me = (access: string) => t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${access}` } });
    const verify = (token: string) => t.inject({ method: 'POST', url: '/api/v1/auth/token/verify/', payload: { token } });

    it('logout ends that session only: its access token is refused, another session goes on', async () => {
      await t.createUser(org, 'viewer', 'sess-logout');
      const a = json(await login(t, 'sess-logout'));
      const b = json(await login(t, 'sess-logout'));
      expect((await me(a.access)).statusCode).toBe(200);
      expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/revoke/', payload: { refresh: a.refresh } })).statusCode).toBe(204);
      const refused = await me(a.access);
      expect(refused.statusCode).toBe(401);
      expect(json(refused).code).toBe('token_invalid');
      expect((await verify(a.access)).statusCode).toBe(401);
      expect((await me(b.access)).statusCode).toBe(200);
      expect((await verify(b.access)).statusCode).toBe(200);
      // It stays dead: still refused later in its lifetime.
      t.clock.advance(600);
      expect((await me(a.access)).statusCode).toBe(401);
      expect((await me(b.access)).statusCode).toBe(200);
    });

    it('a refreshed session keeps going with the new access token, and the old one of the same session too', async () => {
      await t.createUser(org, 'viewer', 'sess-refresh');
      const a = json(await login(t, 'sess-refresh'));
      const next = json(await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: a.refresh } }));
      expect((await me(a.access)).statusCode).toBe(200);
      expect((await me(next.access)).statusCode).toBe(200);
    });

    it('a password change ends every session of the user', async () => {
      const user = await t.createUser(org, 'analyst', 'sess-password');
      const a = json(await login(t, 'sess-password'));
      const b = json(await login(t, 'sess-password'));
      const changed = await t.inject({
        method: 'POST',
        url: '/api/v1/auth/password/',
        headers: { authorization: `Bearer ${a.access}` },
        payload: { current_password: PASSWORD, new_password: 'a new passphrase for sessions' },
      });
      expect(changed.statusCode).toBe(204);
      expect((await me(a.access)).statusCode).toBe(401);
      expect((await me(b.access)).statusCode).toBe(401);
      const fresh = json(await login(t, user.username, 'a new passphrase for sessions'));
      expect((await me(fresh.access)).statusCode).toBe(200);
    });

    it('reuse detection ends the whole session, access tokens included', async () => {
      await t.createUser(org, 'viewer', 'sess-reuse');
      const a = json(await login(t, 'sess-reuse'));
      const next = json(await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: a.refresh } }));
      expect((await t.inject({ method: 'POST', url: '/api/v1/auth/token/refresh/', payload: { refresh: a.refresh } })).statusCode).toBe(401);
      expect((await me(a.access)).statusCode).toBe(401);
      expect((await me(next.access)).statusCode).toBe(401);
    });

    it('reactivating a deactivated user does not revive the access tokens issued before', async () => {
      const user = await t.createUser(org, 'viewer', 'sess-reactivate');
      const a = json(await login(t, 'sess-reactivate'));
      expect((await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { is_active: false } })).statusCode).toBe(200);
      expect((await me(a.access)).statusCode).toBe(401);
      expect((await t.as(org.owner, { method: 'PATCH', url: `/api/v1/users/${user.id}/`, payload: { is_active: true } })).statusCode).toBe(200);
      expect((await me(a.access)).statusCode).toBe(401);
      expect((await verify(a.access)).statusCode).toBe(401);
      const fresh = json(await login(t, 'sess-reactivate'));
      expect((await me(fresh.access)).statusCode).toBe(200);
    });

    it('refuses a token that names no session', async () => {
      const token = await new SignJWT({ org: org.id, role: 'owner', type: 'access' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(org.owner.id)
        .setJti('no-session')
        .setIssuedAt(Math.floor(t.clock.now().getTime() / 1000))
        .setExpirationTime(Math.floor(t.clock.now().getTime() / 1000) + 600)
        .setIssuer('threatmon')
        .setAudience('threatmon-api')
        .sign(new TextEncoder().encode(JWT_SECRET));
      expect((await me(token)).statusCode).toBe(401);
    });
  });

  it('never returns or logs a password hash or a password', async () => {
    const rows = await t.db.selectFrom('audit_log').select('changes').execute();
    expect(rows.map((r) => r.changes).join('')).not.toContain(PASSWORD);
  });
});

describe('login throttling', () => {
  let t: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg('starter', 'thr');
  });
  afterAll(() => t.close());

  it('answers 401 to the first 10 failures for a username, then 429 to every attempt, the right password too', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await login(t, org.owner.username, 'wrong password!', `10.1.0.${i}`);
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const eleventh = await login(t, org.owner.username, 'wrong password!', '10.1.1.1');
    expect(eleventh.statusCode).toBe(429);
    expect(json(eleventh)).toMatchObject({ code: 'login_throttled', retry_after: 900 });
    expect(eleventh.headers['retry-after']).toBe('900');
    t.clock.advance(60);
    const right = await login(t, org.owner.username, PASSWORD, '10.1.1.2');
    expect(right.statusCode).toBe(429);
    // 429s do not extend the window: it still ends 15 minutes after the first failure.
    expect(json(right).retry_after).toBe(840);
    t.clock.advance(840);
    expect((await login(t, org.owner.username, PASSWORD, '10.1.1.3')).statusCode).toBe(200);
  });

  it('lets exactly 10 of 16 concurrent wrong passwords for one username through to a 401, the rest 429', async () => {
    const user = await t.createUser(org, 'viewer', 'thr-concurrent');
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => login(t, user.username, 'wrong password!', `10.2.0.${i}`)));
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
  });

  it('does not count a right password: 9 failures, a success, then the 10th failure is still a 401', async () => {
    const user = await t.createUser(org, 'viewer', 'thr-release');
    for (let i = 0; i < 9; i++) expect((await login(t, user.username, 'wrong password!', `10.3.0.${i}`)).statusCode).toBe(401);
    expect((await login(t, user.username, PASSWORD, '10.3.1.1')).statusCode).toBe(200);
    expect((await login(t, user.username, 'wrong password!', '10.3.1.2')).statusCode).toBe(401);
    expect((await login(t, user.username, PASSWORD, '10.3.1.3')).statusCode).toBe(429);
  });

  it('counts a wrong current_password on POST /auth/password/ as a failed login of that username', async () => {
    const user = await t.createUser(org, 'analyst', 'thr-pwchange');
    const change = (current: string) =>
      t.as(user, { method: 'POST', url: '/api/v1/auth/password/', payload: { current_password: current, new_password: 'another long passphrase' }, remoteAddress: '10.4.0.1' });
    for (let i = 0; i < 10; i++) expect((await change('wrong password!')).statusCode, `attempt ${i + 1}`).toBe(400);
    const throttled = await change(PASSWORD);
    expect(throttled.statusCode).toBe(429);
    expect(json(throttled)).toMatchObject({ code: 'login_throttled' });
    expect((await login(t, user.username, PASSWORD, '10.4.0.2')).statusCode).toBe(429);
    const failed = await t.db.selectFrom('audit_log').select('action').where('target_id', '=', user.id).where('action', '=', 'auth.login_failed').execute();
    expect(failed).toHaveLength(10);
  });

  it('throttles a client IP after 50 failures across usernames', async () => {
    for (let i = 0; i < 50; i++) {
      expect((await login(t, `ghost-${i}`, 'wrong password!', '192.0.2.7')).statusCode).toBe(401);
    }
    const res = await login(t, org.owner.username, PASSWORD, '192.0.2.7');
    expect(res.statusCode).toBe(429);
    expect((await login(t, org.owner.username, PASSWORD, '192.0.2.8')).statusCode).toBe(200);
  });
});
