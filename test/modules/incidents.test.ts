import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSITIONS } from '../../src/modules/incidents/incidents.service.js';
import { IncidentSchema, STATUSES, type Status } from '../../src/modules/incidents/incidents.schemas.js';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('incidents', () => {
  let t: TestApp;
  let other: TestOrg;
  const m = {} as Record<Role, User>;

  const create = (body: object, as: User = m.analyst) => t.as(as, { method: 'POST', url: '/api/v1/incidents/', payload: body });
  const patch = (id: string, body: object, as: User = m.analyst, headers = {}) =>
    t.as(as, { method: 'PATCH', url: `/api/v1/incidents/${id}/`, payload: body, headers });
  const get = (url: string, as: User = m.viewer) => t.as(as, { method: 'GET', url: `/api/v1${url}` });

  beforeAll(async () => {
    t = await buildTestApp();
    const team = await t.createTeam('enterprise', 'soc', 'soc');
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'elsewhere');
  });
  afterAll(() => t.close());

  describe('create and read', () => {
    it('creates with defaults and returns the full record with an ETag', async () => {
      const res = await create({ title: 'Phishing wave' });
      expect(res.statusCode).toBe(201);
      const body = json(res);
      expect(body).toMatchObject({
        title: 'Phishing wave',
        description: '',
        status: 'open',
        severity: 'medium',
        tlp: 'amber',
        tags: [],
        assignee: null,
        source_alert: null,
        ioc_count: 0,
        created_by: m.analyst.id,
        resolved_at: null,
        closed_at: null,
      });
      expect(body.created_at).toBe(t.clock.now().toISOString());
      expect(res.headers.etag).toBe('"1"');
      const read = await get(`/incidents/${body.id}/`);
      expect(json(read)).toEqual(body);
      expect(read.headers.etag).toBe('"1"');
      expect((await get(`/incidents/${body.id}/`, m.viewer).then(() => t.as(m.viewer, { method: 'GET', url: `/api/v1/incidents/${body.id}/`, headers: { 'if-none-match': '"1"' } }))).statusCode).toBe(304);
    });

    it('creates with initial IOCs, normalised, counting them', async () => {
      const res = await create({
        title: 'C2 beacons',
        severity: 'high',
        tlp: 'red',
        tags: ['c2', 'apt'],
        assignee: m.analyst.id,
        iocs: [
          { type: 'domain', value: 'Evil[.]COM' },
          { type: 'ipv4', value: '1.2.3[.]4', description: 'beacon' },
          { type: 'domain', value: 'evil.com' },
        ],
      });
      expect(res.statusCode).toBe(201);
      const inc = json(res);
      expect(inc).toMatchObject({ severity: 'high', tlp: 'red', tags: ['c2', 'apt'], assignee: m.analyst.id, ioc_count: 2 });
      const iocs = json(await get(`/incidents/${inc.id}/iocs/?ordering=value`));
      expect(iocs.results.map((i: { value: string }) => i.value)).toEqual(['1.2.3.4', 'evil.com']);
      expect(iocs.results[0]).toMatchObject({ type: 'ipv4', tlp: 'red', description: 'beacon', incident: inc.id, created_by: m.analyst.id });
    });

    it('refuses invalid input with field errors and creates nothing', async () => {
      const before = json(await get('/incidents/')).count;
      const res = await create({ title: '', severity: 'urgent', tlp: 'white', tags: 'x', bogus: 1 });
      expect(res.statusCode).toBe(400);
      expect(json(res).errors.map((e: { field: string }) => e.field).sort()).toEqual(['bogus', 'severity', 'tags', 'title', 'tlp']);
      const badIoc = await create({ title: 'x', iocs: [{ type: 'md5', value: 'nothex' }] });
      expect(badIoc.statusCode).toBe(400);
      expect(json(badIoc).errors).toEqual([{ field: 'iocs.0.value', message: 'must be 32 hexadecimal characters' }]);
      const long = await create({ title: 'x'.repeat(201) });
      expect(long.statusCode).toBe(400);
      expect(json(await get('/incidents/')).count).toBe(before);
    });

    it('refuses an assignee from another organization (400)', async () => {
      const res = await create({ title: 'x', assignee: other.owner.id });
      expect(res.statusCode).toBe(400);
      expect(json(res).errors).toEqual([{ field: 'assignee', message: 'must be a user of your organization' }]);
    });

    it('lets viewers read but not write; admins delete', async () => {
      expect((await create({ title: 'by viewer' }, m.viewer)).statusCode).toBe(403);
      const inc = json(await create({ title: 'to delete' }));
      expect((await patch(inc.id, { title: 'y' }, m.viewer)).statusCode).toBe(403);
      expect((await t.as(m.analyst, { method: 'DELETE', url: `/api/v1/incidents/${inc.id}/` })).statusCode).toBe(403);
      expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/incidents/${inc.id}/` })).statusCode).toBe(204);
      expect((await get(`/incidents/${inc.id}/`)).statusCode).toBe(404);
    });

    it("answers 404 for another organization's incident on every route, and 401 without a token", async () => {
      const mine = json(await create({ title: 'secret', iocs: [{ type: 'ipv4', value: '9.9.9.9' }] }));
      const ioc = json(await get(`/incidents/${mine.id}/iocs/`)).results[0];
      const urls: Array<['GET' | 'PATCH' | 'DELETE' | 'POST', string, object?]> = [
        ['GET', `/api/v1/incidents/${mine.id}/`],
        ['PATCH', `/api/v1/incidents/${mine.id}/`, { title: 'pwned' }],
        ['DELETE', `/api/v1/incidents/${mine.id}/`],
        ['GET', `/api/v1/incidents/${mine.id}/iocs/`],
        ['POST', `/api/v1/incidents/${mine.id}/iocs/`, { type: 'ipv4', value: '8.8.8.8' }],
        ['GET', `/api/v1/incidents/${mine.id}/iocs/${ioc.id}/`],
        ['PATCH', `/api/v1/incidents/${mine.id}/iocs/${ioc.id}/`, { description: 'x' }],
        ['DELETE', `/api/v1/incidents/${mine.id}/iocs/${ioc.id}/`],
        ['GET', `/api/v1/incidents/${mine.id}/events/`],
        ['GET', `/api/v1/incidents/${mine.id}/comments/`],
        ['POST', `/api/v1/incidents/${mine.id}/comments/`, { body: 'hi' }],
        ['GET', `/api/v1/incidents/${mine.id}/export/`],
      ];
      for (const [method, url, payload] of urls) {
        const res = await t.as(other.owner, { method, url, payload });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect((await t.inject({ method, url, payload })).statusCode, `${method} ${url} anonymous`).toBe(401);
      }
      expect(json(await get(`/incidents/${mine.id}/`))).toMatchObject({ title: 'secret', ioc_count: 1 });
      const theirs = json(await t.as(other.owner, { method: 'GET', url: '/api/v1/incidents/' }));
      expect(theirs.results.map((i: { id: string }) => i.id)).not.toContain(mine.id);
      const corr = json(await t.as(other.owner, { method: 'GET', url: '/api/v1/incidents/iocs/?value=9.9.9.9' }));
      expect(corr.count).toBe(0);
    });
  });

  describe('status machine', () => {
    const walk = async (path: Status[]) => {
      const inc = json(await create({ title: `walk ${path.join('>')}` }));
      for (const s of path) expect((await patch(inc.id, { status: s })).statusCode, s).toBe(200);
      return inc.id as string;
    };
    const reach: Record<Status, Status[]> = {
      open: [],
      investigating: ['investigating'],
      contained: ['investigating', 'contained'],
      resolved: ['resolved'],
      closed: ['closed'],
    };

    for (const from of STATUSES) {
      for (const to of STATUSES) {
        if (from === to) continue;
        const allowed = TRANSITIONS[from].includes(to);
        it(`${from} -> ${to}: ${allowed ? '200' : '409'}`, async () => {
          const id = await walk(reach[from]);
          const res = await patch(id, { status: to });
          if (allowed) {
            expect(res.statusCode).toBe(200);
            expect(json(res).status).toBe(to);
          } else {
            expect(res.statusCode).toBe(409);
            expect(json(res)).toMatchObject({ code: 'invalid_transition', allowed: TRANSITIONS[from] });
            expect(json(res).detail).toContain(TRANSITIONS[from].join(', '));
            expect(json(await get(`/incidents/${id}/`)).status).toBe(from);
          }
        });
      }
    }

    it('treats a PATCH to the current status as a no-op', async () => {
      const id = await walk(['investigating']);
      const before = await get(`/incidents/${id}/`);
      const res = await patch(id, { status: 'investigating' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe(before.headers.etag);
    });

    it('sets resolved_at and closed_at on the server, keeps resolved_at on close, clears both on reopen', async () => {
      const id = await walk(['investigating']);
      t.clock.advance(3600);
      const resolved = json(await patch(id, { status: 'resolved' }));
      expect(resolved.resolved_at).toBe(t.clock.now().toISOString());
      t.clock.advance(60);
      const closed = json(await patch(id, { status: 'closed' }));
      expect(closed.resolved_at).toBe(resolved.resolved_at);
      expect(closed.closed_at).toBe(t.clock.now().toISOString());
      const reopened = json(await patch(id, { status: 'open' }));
      expect(reopened).toMatchObject({ status: 'open', resolved_at: null, closed_at: null });
      const direct = json(await patch((json(await create({ title: 'closed at once' }))).id, { status: 'closed' }));
      expect(direct.closed_at).not.toBeNull();
      expect(direct.resolved_at).toBeNull();
    });

    it('refuses a stale If-Match with 412 and changes nothing', async () => {
      const inc = json(await create({ title: 'concurrent' }));
      expect((await patch(inc.id, { title: 'first' }, m.analyst, { 'if-match': '"1"' })).statusCode).toBe(200);
      const stale = await patch(inc.id, { title: 'second' }, m.analyst, { 'if-match': '"1"' });
      expect(stale.statusCode).toBe(412);
      expect(json(await get(`/incidents/${inc.id}/`)).title).toBe('first');
    });
  });

  describe('timeline and comments', () => {
    it('records creation, each change from -> to, IOCs added and removed, and comments', async () => {
      const inc = json(await create({ title: 'timeline', iocs: [{ type: 'sha256', value: 'A'.repeat(64) }] }));
      await patch(inc.id, { severity: 'critical', title: 'timeline 2' });
      const iocRes = await t.as(m.analyst, { method: 'POST', url: `/api/v1/incidents/${inc.id}/iocs/`, payload: { type: 'url', value: 'hxxp://bad[.]example/x' } });
      expect(iocRes.statusCode).toBe(201);
      const ioc = json(iocRes);
      expect(ioc.value).toBe('http://bad.example/x');
      expect((await t.as(m.analyst, { method: 'DELETE', url: `/api/v1/incidents/${inc.id}/iocs/${ioc.id}/` })).statusCode).toBe(403);
      expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/incidents/${inc.id}/iocs/${ioc.id}/` })).statusCode).toBe(204);
      const comment = await t.as(m.analyst, { method: 'POST', url: `/api/v1/incidents/${inc.id}/comments/`, payload: { body: 'Looking into it' } });
      expect(comment.statusCode).toBe(201);
      expect(json(comment)).toMatchObject({ author: m.analyst.id, body: 'Looking into it' });
      expect((await t.as(m.viewer, { method: 'POST', url: `/api/v1/incidents/${inc.id}/comments/`, payload: { body: 'no' } })).statusCode).toBe(403);
      expect((await t.as(m.analyst, { method: 'POST', url: `/api/v1/incidents/${inc.id}/comments/`, payload: { body: '' } })).statusCode).toBe(400);

      const events = json(await get(`/incidents/${inc.id}/events/?ordering=created_at`)).results;
      expect(events.map((e: { kind: string }) => e.kind)).toEqual(['created', 'ioc_added', 'updated', 'ioc_added', 'ioc_removed', 'comment_added']);
      expect(events[2].changes).toEqual({ severity: { from: 'medium', to: 'critical' }, title: { from: 'timeline', to: 'timeline 2' } });
      expect(events[4]).toMatchObject({ ioc: ioc.id, changes: { type: 'url', value: 'http://bad.example/x' }, actor: m.admin.id });
      const comments = json(await get(`/incidents/${inc.id}/comments/`)).results;
      expect(comments).toHaveLength(1);
      expect(json(await get(`/incidents/${inc.id}/`)).ioc_count).toBe(1);
    });

    it('writes every change to the audit log', async () => {
      const audit = json(await t.as(m.admin, { method: 'GET', url: '/api/v1/audit-log/?target_type=incident&page_size=500' }));
      const actions = new Set(audit.results.map((e: { action: string }) => e.action));
      for (const a of ['incident.created', 'incident.updated', 'incident.deleted', 'ioc.created', 'comment.created']) expect(actions).toContain(a);
    });

    it('writes one incident.updated entry per PATCH, with its actor, target and each change from -> to', async () => {
      const inc = json(await create({ title: 'audited', severity: 'low' }));
      expect((await patch(inc.id, { severity: 'high', tags: ['a'] }, m.analyst)).statusCode).toBe(200);
      expect((await patch(inc.id, { title: 'audited 2' }, m.admin)).statusCode).toBe(200);
      expect((await patch(inc.id, { status: 'investigating' }, m.analyst)).statusCode).toBe(200);
      const audit = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/audit-log/?action=incident.updated&target_type=incident&ordering=created_at&page_size=500` }));
      const mine = audit.results.filter((e: { target_id: string }) => e.target_id === inc.id);
      expect(mine.map((e: { actor: string; changes: unknown }) => [e.actor, e.changes])).toEqual([
        [m.analyst.id, { severity: { from: 'low', to: 'high' }, tags: { from: [], to: ['a'] } }],
        [m.admin.id, { title: { from: 'audited', to: 'audited 2' } }],
        [m.analyst.id, { status: { from: 'open', to: 'investigating' } }],
      ]);
    });
  });

  describe('IOCs', () => {
    let incId: string;
    beforeAll(async () => {
      incId = json(await create({ title: 'ioc home', tlp: 'green' })).id;
    });
    const post = (payload: unknown, as: User = m.analyst) => t.as(as, { method: 'POST', url: `/api/v1/incidents/${incId}/iocs/`, payload: payload as object });

    it('adds one, refuses the same type+value again with 409 duplicate', async () => {
      const res = await post({ type: 'email', value: 'Bad[@]Actor[.]com', tags: ['sender'] });
      expect(res.statusCode).toBe(201);
      expect(json(res)).toMatchObject({ type: 'email', value: 'bad@actor.com', tlp: 'green', tags: ['sender'] });
      const dup = await post({ type: 'email', value: 'bad@actor.com' });
      expect(dup.statusCode).toBe(409);
      expect(json(dup).code).toBe('duplicate');
    });

    it('validates one IOC with field errors, unknown fields included', async () => {
      const res = await post({ type: 'cve', value: 'CVE-1-2', colour: 'red' });
      expect(res.statusCode).toBe(400);
      expect(json(res).errors).toEqual([{ field: 'colour', message: 'unknown field' }]);
      const bad = await post({ type: 'cve', value: 'CVE-1-2' });
      expect(json(bad).errors).toEqual([{ field: 'value', message: 'must be a CVE id such as CVE-2024-12345' }]);
      const noType = await post({ value: 'x' });
      expect(json(noType).errors).toEqual([{ field: 'type', message: 'this field is required' }]);
    });

    it('adds many: keeps the good, reports the bad by index, counts duplicates', async () => {
      const res = await post([
        { type: 'md5', value: 'D41D8CD98F00B204E9800998ECF8427E' },
        { type: 'md5', value: 'zz' },
        { type: 'md5', value: 'd41d8cd98f00b204e9800998ecf8427e' },
        { type: 'email', value: 'bad@actor.com' },
        'not an object',
        { type: 'asn', value: '64500' },
      ]);
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(body).toMatchObject({ created: 2, duplicates: 2 });
      expect(body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 4]);
      expect(body.rejected[0].errors).toEqual([{ field: 'value', message: 'must be 32 hexadecimal characters' }]);
      expect((await post(Array.from({ length: 1001 }, () => ({ type: 'other', value: 'x' })))).statusCode).toBe(400);
    });

    it('filters by type and searches value and description', async () => {
      const md5 = json(await get(`/incidents/${incId}/iocs/?type=md5`));
      expect(md5.results.map((i: { value: string }) => i.value)).toEqual(['d41d8cd98f00b204e9800998ecf8427e']);
      expect(json(await get(`/incidents/${incId}/iocs/?type=md5,asn`)).count).toBe(2);
      expect(json(await get(`/incidents/${incId}/iocs/?search=actor`)).count).toBe(1);
      expect((await get(`/incidents/${incId}/iocs/?type=hash`)).statusCode).toBe(400);
    });

    it('updates description/tlp/tags (value is fixed) and deletes', async () => {
      const ioc = json(await get(`/incidents/${incId}/iocs/?type=asn`)).results[0];
      expect(ioc.value).toBe('AS64500');
      const upd = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/incidents/${incId}/iocs/${ioc.id}/`, payload: { description: 'hosting', tlp: 'red', first_seen: '2026-01-01T00:00:00.000Z' } });
      expect(upd.statusCode).toBe(200);
      expect(json(upd)).toMatchObject({ description: 'hosting', tlp: 'red', first_seen: '2026-01-01T00:00:00.000Z', value: 'AS64500' });
      const fixed = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/incidents/${incId}/iocs/${ioc.id}/`, payload: { value: '1' } });
      expect(fixed.statusCode).toBe(200);
      expect(json(fixed).value).toBe('AS64500');
      const viewerDel = await t.as(m.viewer, { method: 'DELETE', url: `/api/v1/incidents/${incId}/iocs/${ioc.id}/` });
      expect(viewerDel.statusCode).toBe(403);
    });

    it('correlates the same value across incidents, normalising the query', async () => {
      const a = json(await create({ title: 'corr A', iocs: [{ type: 'domain', value: 'shared.example' }] }));
      const b = json(await create({ title: 'corr B', iocs: [{ type: 'domain', value: 'SHARED.example' }, { type: 'url', value: 'http://shared.example/x' }] }));
      const res = json(await get('/incidents/iocs/?value=shared[.]example'));
      expect(res.count).toBe(2);
      const ids = res.results.map((r: { incident: { id: string } }) => r.incident.id).sort();
      expect(ids).toEqual([a.id, b.id].sort());
      expect(res.results[0].incident).toHaveProperty('title');
      expect(res.results[0].incident).toHaveProperty('status', 'open');
      expect(json(await get('/incidents/iocs/?type=url&value=http://shared.example/x')).count).toBe(1);
    });
  });

  describe('list', () => {
    it('shows each incident exactly as its own GET does, field by field and in order (the list JSON is written by the database)', async () => {
      // Characters JSON must escape, and some it need not: quotes, backslash, controls, U+2028, astral, markup.
      const odd = 'a"b\\c\n\t\u0001\u001f\u2028é😀</script>';
      const made = json(await create({ title: `Odd ${odd}`, description: odd, severity: 'critical', tlp: 'red', tags: [odd, 'plain'], assignee: m.analyst.id }));
      await patch(made.id, { status: 'investigating' });
      t.clock.advance(1.234);
      await patch(made.id, { status: 'resolved' });
      const bare = json(await create({ title: 'bare', severity: 'critical', tlp: 'red' }));
      const one = json(await get(`/incidents/${made.id}/`));
      expect(one.resolved_at).not.toBeNull();
      expect(one.tags).toEqual([odd, 'plain']);
      for (const [id, qs] of [[made.id, '?status=resolved&severity=critical'], [bare.id, '?tlp=red&severity=critical&status=open']] as const) {
        const page = json(await get(`/incidents/${qs}`));
        const listed = page.results.find((i: { id: string }) => i.id === id);
        const alone = json(await get(`/incidents/${id}/`));
        expect(listed).toEqual(alone);
        expect(Object.keys(listed)).toEqual(Object.keys(IncidentSchema.properties));
      }
    });

    it('filters by status, severity, tlp, tag and assignee (me, none, id), and orders by severity rank', async () => {
      const t2 = await buildTestApp();
      const o = await t2.createOrg('enterprise', 'listing');
      const analyst = await t2.createUser(o, 'analyst', 'lister');
      const mk = (body: object) => t2.as(analyst, { method: 'POST', url: '/api/v1/incidents/', payload: body });
      await mk({ title: 'low open', severity: 'low', tags: ['x'] });
      await mk({ title: 'critical mine', severity: 'critical', assignee: analyst.id, tlp: 'red' });
      const hi = json(await mk({ title: 'high investigating', severity: 'high', tags: ['x', 'y'] }));
      await t2.as(analyst, { method: 'PATCH', url: `/api/v1/incidents/${hi.id}/`, payload: { status: 'investigating' } });
      await mk({ title: 'medium other owner', assignee: o.owner.id });
      const list = async (qs: string) => json(await t2.as(analyst, { method: 'GET', url: `/api/v1/incidents/${qs}` })).results.map((i: { title: string }) => i.title);
      expect(await list('?status=open,investigating&severity=high')).toEqual(['high investigating']);
      expect(await list('?assignee=me')).toEqual(['critical mine']);
      expect((await list('?assignee=none')).sort()).toEqual(['high investigating', 'low open']);
      expect(await list(`?assignee=${o.owner.id}`)).toEqual(['medium other owner']);
      expect(await list('?tag=y')).toEqual(['high investigating']);
      expect((await list('?tag=x')).length).toBe(2);
      expect(await list('?tlp=red')).toEqual(['critical mine']);
      expect(await list('?ordering=-severity')).toEqual(['critical mine', 'high investigating', 'medium other owner', 'low open']);
      expect(await list('?ordering=severity')).toEqual(['low open', 'medium other owner', 'high investigating', 'critical mine']);
      expect(await list('?search=MINE')).toEqual(['critical mine']);
      expect((await t2.as(analyst, { method: 'GET', url: '/api/v1/incidents/?assignee=bob' })).statusCode).toBe(400);
      expect((await t2.as(analyst, { method: 'GET', url: '/api/v1/incidents/?status=done' })).statusCode).toBe(400);
      t2.clock.advance(10);
      const since = t2.clock.now().toISOString();
      t2.clock.advance(10);
      await t2.as(analyst, { method: 'PATCH', url: `/api/v1/incidents/${hi.id}/`, payload: { title: 'high investigating!' } });
      expect(await list(`?updated_after=${encodeURIComponent(since)}`)).toEqual(['high investigating!']);

      const stats = json(await t2.as(analyst, { method: 'GET', url: '/api/v1/incidents/stats/' }));
      expect(stats).toMatchObject({
        by_status: { open: 3, investigating: 1, contained: 0, resolved: 0, closed: 0 },
        by_severity: { low: 1, medium: 1, high: 1, critical: 1 },
        open: 4,
        mean_time_to_resolve_seconds: null,
      });
      const usage = json(await t2.as(analyst, { method: 'GET', url: '/api/v1/organization/usage/' }));
      expect(usage.incidents_open).toBe(4);
      await t2.close();
    });

    it('keeps counted totals equal to a real count through creates, status and severity changes and deletes', async () => {
      const t4 = await buildTestApp();
      const o = await t4.createOrg('enterprise', 'counters');
      const ids: string[] = [];
      for (const severity of ['low', 'high', 'high', 'critical']) {
        ids.push(json(await t4.as(o.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: severity, severity } })).id);
      }
      await t4.as(o.owner, { method: 'PATCH', url: `/api/v1/incidents/${ids[0]}/`, payload: { status: 'investigating', severity: 'high' } });
      await t4.as(o.owner, { method: 'PATCH', url: `/api/v1/incidents/${ids[1]}/`, payload: { status: 'closed' } });
      await t4.as(o.owner, { method: 'DELETE', url: `/api/v1/incidents/${ids[2]}/` });
      for (const qs of ['', '?status=open', '?severity=high', '?status=open,investigating&severity=high', '?status=closed', '?severity=low']) {
        const page = json(await t4.as(o.owner, { method: 'GET', url: `/api/v1/incidents/${qs}` }));
        expect(page.count, qs).toBe(page.results.length);
      }
      expect(json(await t4.as(o.owner, { method: 'GET', url: '/api/v1/incidents/?severity=high' })).count).toBe(2);
      // A counted total is read with its page; a page with no rows reads it alone.
      expect(json(await t4.as(o.owner, { method: 'GET', url: '/api/v1/incidents/?severity=high&page_size=1&page=2' }))).toMatchObject({ count: 2, next: null });
      const past = await t4.as(o.owner, { method: 'GET', url: '/api/v1/incidents/?severity=high&page_size=1&page=3' });
      expect([past.statusCode, json(past).code]).toEqual([404, 'invalid_page']);
      expect(json(await t4.as(o.owner, { method: 'GET', url: '/api/v1/incidents/?severity=medium' }))).toMatchObject({ count: 0, results: [] });
      await t4.close();
    });

    it('computes the mean time to resolve', async () => {
      const t3 = await buildTestApp();
      const o = await t3.createOrg('enterprise', 'mttr');
      const a = json(await t3.as(o.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'a' } }));
      const b = json(await t3.as(o.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'b' } }));
      t3.clock.advance(100);
      await t3.as(o.owner, { method: 'PATCH', url: `/api/v1/incidents/${a.id}/`, payload: { status: 'resolved' } });
      t3.clock.advance(200);
      await t3.as(o.owner, { method: 'PATCH', url: `/api/v1/incidents/${b.id}/`, payload: { status: 'resolved' } });
      const stats = json(await t3.as(o.owner, { method: 'GET', url: '/api/v1/incidents/stats/' }));
      expect(stats.mean_time_to_resolve_seconds).toBeCloseTo(200, 1);
      expect(stats.open).toBe(0);
      await t3.close();
    });
  });

  describe('export', () => {
    it('exports a deterministic, valid-looking STIX 2.1 bundle', async () => {
      const inc = json(
        await create({
          title: "Bob's incident",
          description: 'Desc',
          tlp: 'amber+strict',
          iocs: [
            { type: 'ipv4', value: '203.0.113.9' },
            { type: 'sha1', value: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' },
            { type: 'cve', value: 'CVE-2021-44228' },
            { type: 'other', value: 'mutex-xyz' },
            { type: 'url', value: "http://x.example/it's" },
            { type: 'asn', value: 'AS64500', tlp: 'clear' },
          ],
        }),
      );
      const res = await get(`/incidents/${inc.id}/export/?format=stix`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('application/stix+json');
      const bundle = json(res);
      expect(bundle.type).toBe('bundle');
      const again = json(await get(`/incidents/${inc.id}/export/`));
      expect(again).toEqual(bundle);
      const byType = (type: string) => bundle.objects.filter((o: { type: string }) => o.type === type);
      const [report] = byType('report');
      expect(report).toMatchObject({ spec_version: '2.1', name: "Bob's incident", object_marking_refs: ['marking-definition--939a9414-2ddd-4d32-a0cd-375ea402b003'] });
      expect(report.description).toContain('mutex-xyz');
      const patterns = byType('indicator').map((i: { pattern: string }) => i.pattern).sort();
      expect(patterns).toEqual(
        [
          "[ipv4-addr:value = '203.0.113.9']",
          "[file:hashes.'SHA-1' = 'da39a3ee5e6b4b0d3255bfef95601890afd80709']",
          "[url:value = 'http://x.example/it\\'s']",
          '[autonomous-system:number = 64500]',
        ].sort(),
      );
      for (const i of byType('indicator')) {
        expect(i).toMatchObject({ pattern_type: 'stix', spec_version: '2.1' });
        expect(i.id).toMatch(/^indicator--[0-9a-f-]{36}$/);
        expect(report.object_refs).toContain(i.id);
      }
      const [vuln] = byType('vulnerability');
      expect(vuln).toMatchObject({ name: 'CVE-2021-44228', external_references: [{ source_name: 'cve', external_id: 'CVE-2021-44228' }] });
      const markings = byType('marking-definition').map((d: { name: string }) => d.name).sort();
      expect(markings).toEqual(['TLP:AMBER+STRICT', 'TLP:CLEAR']);
      const ids = bundle.objects.map((o: { id: string }) => o.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('exports CSV with the documented header, escaping formulas', async () => {
      const inc = json(await create({ title: 'csv', iocs: [{ type: 'filename', value: 'a,b.exe', description: '=HYPERLINK("x")', tags: ['t1', 't2'] }] }));
      const res = await get(`/incidents/${inc.id}/export/?format=csv`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain('text/csv');
      const lines = res.body.trim().split('\n');
      expect(lines[0]).toBe('type,value,description,tlp,tags,first_seen,last_seen,created_at');
      expect(lines[1]).toContain('filename,"a,b.exe",');
      expect(lines[1]).toContain("'=HYPERLINK");
      expect(lines[1]).toContain('t1;t2');
      expect((await get(`/incidents/${inc.id}/export/?format=pdf`)).statusCode).toBe(400);
    });
  });
});
