import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, PASSWORD, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('users, organizations and the audit log', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  const members = {} as Record<Role, User>;

  beforeAll(async () => {
    t = await buildTestApp();
    const team = await t.createTeam('professional', 'home', 'home');
    org = team.org;
    Object.assign(members, team.members);
    other = await t.createOrg('starter', 'away');
  });
  afterAll(() => t.close());

  describe('role matrix', () => {
    const cases: Array<[string, string, Role, object?]> = [
      ['GET', '/api/v1/users/', 'admin'],
      ['POST', '/api/v1/users/', 'admin', { username: 'x-new', email: 'x@example.com', password: PASSWORD, role: 'viewer' }],
      ['GET', '/api/v1/audit-log/', 'admin'],
      ['PATCH', '/api/v1/organization/', 'admin', { name: 'home' }],
      ['GET', '/api/v1/organization/', 'viewer'],
      ['GET', '/api/v1/organization/usage/', 'viewer'],
      ['GET', '/api/v1/auth/me/', 'viewer'],
    ];
    const rank: Role[] = ['viewer', 'analyst', 'admin', 'owner'];
    for (const [method, url, min, payload] of cases) {
      for (const role of rank) {
        const allowed = rank.indexOf(role) >= rank.indexOf(min);
        it(`${method} ${url} as ${role}: ${allowed ? 'allowed' : '403'}`, async () => {
          const body = payload && 'username' in payload ? { ...payload, username: `x-${role}-${method}` } : payload;
          const res = await t.as(members[role], { method: method as 'GET', url, payload: body });
          if (allowed) expect(res.statusCode, res.body).toBeLessThan(300);
          else {
            expect(res.statusCode).toBe(403);
            expect(json(res).code).toBe('permission_denied');
          }
        });
      }
      it(`${method} ${url} without a token: 401`, async () => {
        const res = await t.inject({ method: method as 'GET', url, payload });
        expect(res.statusCode).toBe(401);
      });
    }

    it('only staff list or create organizations', async () => {
      expect((await t.as(members.owner, { method: 'GET', url: '/api/v1/organizations/' })).statusCode).toBe(403);
      const staffOrg = await t.createOrg('enterprise', 'platform', true);
      const list = await t.as(staffOrg.owner, { method: 'GET', url: '/api/v1/organizations/?ordering=name' });
      expect(list.statusCode).toBe(200);
      expect(json(list).results.map((o: { name: string }) => o.name)).toEqual(['away', 'home', 'platform']);
    });
  });

  describe('users', () => {
    it('creates a user (201) who can log in, and refuses a taken username with 409', async () => {
      const res = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'newbie', email: 'Newbie@Example.com', password: PASSWORD, role: 'analyst' } });
      expect(res.statusCode).toBe(201);
      expect(json(res)).toMatchObject({ username: 'newbie', email: 'newbie@example.com', role: 'analyst', is_active: true, is_staff: false, last_login_at: null });
      expect(res.body).not.toContain('password');
      const login = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: 'newbie', password: PASSWORD } });
      expect(login.statusCode).toBe(200);
      const again = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'newbie', email: 'n@example.com', password: PASSWORD, role: 'viewer' } });
      expect(again.statusCode).toBe(409);
      expect(json(again).code).toBe('duplicate');
      // Usernames are unique across organizations too: they are the login.
      const elsewhere = await t.as(other.owner, { method: 'POST', url: '/api/v1/users/', payload: { username: 'newbie', email: 'n@example.com', password: PASSWORD, role: 'viewer' } });
      expect(elsewhere.statusCode).toBe(409);
    });

    it('takes usernames as unique ignoring case (409), and logs in whatever the case', async () => {
      const res = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'CaseLogin', email: 'case@example.com', password: PASSWORD, role: 'viewer' } });
      expect(res.statusCode).toBe(201);
      for (const username of ['caselogin', 'CASELOGIN']) {
        const clash = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username, email: 'c2@example.com', password: PASSWORD, role: 'viewer' } });
        expect(clash.statusCode, username).toBe(409);
        expect(json(clash).code).toBe('duplicate');
        const elsewhere = await t.as(other.owner, { method: 'POST', url: '/api/v1/users/', payload: { username, email: 'c3@example.com', password: PASSWORD, role: 'viewer' } });
        expect(elsewhere.statusCode).toBe(409);
      }
      for (const username of ['caselogin', 'CASELOGIN', 'CaseLogin']) {
        const login = await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username, password: PASSWORD } });
        expect(login.statusCode, username).toBe(200);
        const me = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${json(login).access}` } });
        expect(json(me).username).toBe('CaseLogin');
      }
      const staff = (await t.createOrg('enterprise', 'ops-case', true)).owner;
      const owner = await t.as(staff, { method: 'POST', url: '/api/v1/organizations/', payload: { name: 'case-customer', owner: { username: 'CASELOGIN', email: 'o@case.example', password: PASSWORD } } });
      expect(owner.statusCode).toBe(409);
    });

    it('refuses a breached password for a new user and for a new organization owner, creating nothing', async () => {
      t.services.hooks.on('auth.breachCheck', async (pw) => pw === 'breached passphrase 2');
      const res = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'breachy', email: 'b@example.com', password: 'breached passphrase 2', role: 'viewer' } });
      expect(res.statusCode).toBe(400);
      expect(json(res).errors).toEqual([{ field: 'password', message: 'appears in a known breach' }]);
      const staff = (await t.createOrg('enterprise', 'ops-breach', true)).owner;
      const org = await t.as(staff, { method: 'POST', url: '/api/v1/organizations/', payload: { name: 'breach-customer', owner: { username: 'breach-owner', email: 'o@breach.example', password: 'breached passphrase 2' } } });
      expect(org.statusCode).toBe(400);
      expect(json(org).errors).toEqual([{ field: 'owner.password', message: 'appears in a known breach' }]);
      expect(await t.db.selectFrom('users').select('id').where('username', 'in', ['breachy', 'breach-owner']).execute()).toEqual([]);
      expect(await t.db.selectFrom('organizations').select('id').where('name', '=', 'breach-customer').execute()).toEqual([]);
    });

    it('validates the new user: short password, bad e-mail, unknown role', async () => {
      const res = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'bad one', email: 'nope', password: 'short', role: 'boss' } });
      expect(res.statusCode).toBe(400);
      const fields = json(res).errors.map((e: { field: string }) => e.field).sort();
      expect(fields).toEqual(['email', 'role', 'username']);
      const short = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'shorty', email: 's@example.com', password: 'short', role: 'viewer' } });
      expect(json(short).errors).toEqual([{ field: 'password', message: 'must be at least 12 characters' }]);
    });

    it('does not let an admin create or promote an owner', async () => {
      const create = await t.as(members.admin, { method: 'POST', url: '/api/v1/users/', payload: { username: 'wannabe', email: 'w@example.com', password: PASSWORD, role: 'owner' } });
      expect(create.statusCode).toBe(403);
      const promote = await t.as(members.admin, { method: 'PATCH', url: `/api/v1/users/${members.analyst.id}/`, payload: { role: 'owner' } });
      expect(promote.statusCode).toBe(403);
      const demoteOwner = await t.as(members.admin, { method: 'PATCH', url: `/api/v1/users/${members.owner.id}/`, payload: { role: 'viewer' } });
      expect(demoteOwner.statusCode).toBe(403);
    });

    it('keeps the last owner: no demotion, deactivation or removal (409)', async () => {
      for (const payload of [{ role: 'admin' }, { is_active: false }]) {
        const res = await t.as(members.owner, { method: 'PATCH', url: `/api/v1/users/${members.owner.id}/`, payload });
        expect(res.statusCode).toBe(409);
        expect(json(res).code).toBe('conflict');
      }
      expect((await t.as(members.owner, { method: 'DELETE', url: `/api/v1/users/${members.owner.id}/` })).statusCode).toBe(409);
      // With a second owner, the first may step down.
      const second = await t.createUser(org, 'owner', 'home-owner-2');
      const res = await t.as(second, { method: 'PATCH', url: `/api/v1/users/${members.owner.id}/`, payload: { role: 'admin' } });
      expect(res.statusCode).toBe(200);
      expect(json(res).role).toBe('admin');
      await t.as(second, { method: 'PATCH', url: `/api/v1/users/${members.owner.id}/`, payload: { role: 'owner' } });
    });

    it('deletes a user (204) and records it', async () => {
      const doomed = await t.createUser(org, 'viewer', 'doomed');
      const res = await t.as(members.admin, { method: 'DELETE', url: `/api/v1/users/${doomed.id}/` });
      expect(res.statusCode).toBe(204);
      expect((await t.as(members.admin, { method: 'GET', url: `/api/v1/users/${doomed.id}/` })).statusCode).toBe(404);
      const audit = json(await t.as(members.admin, { method: 'GET', url: '/api/v1/audit-log/?action=user.deleted' }));
      expect(audit.results[0]).toMatchObject({ actor: members.admin.id, target_type: 'user', target_id: doomed.id, changes: { username: 'doomed', role: 'viewer' } });
    });

    it("answers 404, never 403, for another organization's user", async () => {
      const foreign = await t.createUser(other, 'viewer', 'foreigner');
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
        const res = await t.as(members.owner, { method, url: `/api/v1/users/${foreign.id}/`, payload: method === 'PATCH' ? { role: 'admin' } : undefined });
        expect(res.statusCode, method).toBe(404);
      }
      const list = json(await t.as(members.owner, { method: 'GET', url: '/api/v1/users/?page_size=500' }));
      expect(list.results.map((u: User) => u.id)).not.toContain(foreign.id);
      expect((await t.db.selectFrom('users').select('role').where('id', '=', foreign.id).executeTakeFirstOrThrow()).role).toBe('viewer');
    });
  });

  describe('organization', () => {
    it('reads its organization with member count and rate limit', async () => {
      const res = await t.as(members.viewer, { method: 'GET', url: '/api/v1/organization/' });
      expect(json(res)).toMatchObject({ id: org.id, name: 'home', plan: 'professional', rate_limit_per_minute: 500 });
      expect(json(res).member_count).toBeGreaterThanOrEqual(4);
      expect(res.headers.etag).toMatch(/^"\d+"$/);
    });

    it('lets an admin rename it but only the owner change the plan', async () => {
      const rename = await t.as(members.admin, { method: 'PATCH', url: '/api/v1/organization/', payload: { name: 'home-renamed' } });
      expect(rename.statusCode).toBe(200);
      expect(json(rename).name).toBe('home-renamed');
      const plan = await t.as(members.admin, { method: 'PATCH', url: '/api/v1/organization/', payload: { plan: 'enterprise' } });
      expect(plan.statusCode).toBe(403);
      const taken = await t.as(members.admin, { method: 'PATCH', url: '/api/v1/organization/', payload: { name: 'away' } });
      expect(taken.statusCode).toBe(409);
      const bad = await t.as(members.owner, { method: 'PATCH', url: '/api/v1/organization/', payload: { plan: 'platinum' } });
      expect(bad.statusCode).toBe(400);
      const ok = await t.as(members.owner, { method: 'PATCH', url: '/api/v1/organization/', payload: { plan: 'enterprise' } });
      expect(json(ok)).toMatchObject({ plan: 'enterprise', rate_limit_per_minute: 2000 });
      const audit = json(await t.as(members.owner, { method: 'GET', url: '/api/v1/audit-log/?action=organization.plan_changed' }));
      expect(audit.results[0].changes).toEqual({ plan: { from: 'professional', to: 'enterprise' } });
    });

    it('reports usage for the plan', async () => {
      const res = await t.as(members.viewer, { method: 'GET', url: '/api/v1/organization/usage/' });
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(body).toMatchObject({ plan: 'enterprise', limit: 2000, monitors: 0, tracking_tokens: 0, incidents_open: 0 });
      expect(body.remaining).toBe(Number(res.headers['ratelimit-remaining']));
      expect(body.reset_seconds).toBeGreaterThan(0);
    });

    it('creates a customer organization with its first owner (staff)', async () => {
      const staff = (await t.createOrg('enterprise', 'ops', true)).owner;
      const res = await t.as(staff, { method: 'POST', url: '/api/v1/organizations/', payload: { name: 'customer', plan: 'starter', owner: { username: 'cust-owner', email: 'o@customer.example', password: PASSWORD } } });
      expect(res.statusCode).toBe(201);
      expect(json(res)).toMatchObject({ name: 'customer', plan: 'starter', member_count: 1 });
      const login = json(await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: 'cust-owner', password: PASSWORD } }));
      const me = await t.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${login.access}` } });
      expect(json(me)).toMatchObject({ role: 'owner', is_staff: false, organization: { name: 'customer' } });
      const dup = await t.as(staff, { method: 'POST', url: '/api/v1/organizations/', payload: { name: 'customer', owner: { username: 'cust-2', email: 'o@customer.example', password: PASSWORD } } });
      expect(dup.statusCode).toBe(409);
      // Nothing half-made: a clash on the owner's username leaves no organization behind.
      const clash = await t.as(staff, { method: 'POST', url: '/api/v1/organizations/', payload: { name: 'customer-2', owner: { username: 'cust-owner', email: 'o@customer.example', password: PASSWORD } } });
      expect(clash.statusCode).toBe(409);
      expect(await t.db.selectFrom('organizations').select('id').where('name', '=', 'customer-2').executeTakeFirst()).toBeUndefined();
    });
  });

  describe('audit log', () => {
    it('records logins and failed logins with actor, ip and target, scoped to the organization', async () => {
      await t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username: members.viewer.username, password: 'wrong wrong wrong' }, remoteAddress: '198.51.100.4' });
      const res = await t.as(members.admin, { method: 'GET', url: '/api/v1/audit-log/?action=auth.login_failed' });
      const entry = json(res).results[0];
      expect(entry).toMatchObject({ action: 'auth.login_failed', actor: members.viewer.id, target_type: 'user', ip: '198.51.100.4', changes: { username: members.viewer.username } });
      const foreign = json(await t.as(other.owner, { method: 'GET', url: '/api/v1/audit-log/?page_size=500' }));
      expect(foreign.results.map((e: { id: string }) => e.id)).not.toContain(entry.id);
    });

    it('filters by actor and target_type', async () => {
      const mine = json(await t.as(members.owner, { method: 'GET', url: `/api/v1/audit-log/?actor=${members.admin.id}&target_type=user` }));
      expect(mine.count).toBeGreaterThan(0);
      expect(mine.results.every((e: { actor: string; target_type: string }) => e.actor === members.admin.id && e.target_type === 'user')).toBe(true);
      expect((await t.as(members.owner, { method: 'GET', url: '/api/v1/audit-log/?actor=nope' })).statusCode).toBe(400);
    });
  });
});
