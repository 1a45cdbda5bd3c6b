import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MonitoringRepository } from '../../src/modules/monitoring/monitoring.repository.js';
import { AlertSchema } from '../../src/modules/monitoring/monitoring.schemas.js';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';
import { countersAndRecounts } from '../helpers/recount.js';

describe('monitors (API.md section 4)', () => {
  let t: TestApp;
  let other: TestOrg;
  const m = {} as Record<Role, User>;
  const create = (body: object, as: User = m.analyst) => t.as(as, { method: 'POST', url: '/api/v1/monitoring/', payload: body });

  beforeAll(async () => {
    t = await buildTestApp();
    const team = await t.createTeam('enterprise', 'watchers', 'watch');
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'strangers');
  });
  afterAll(() => t.close());

  it('creates a monitor with its terms normalised for the type, and reads it back with its figures and an ETag', async () => {
    const res = await create({ name: 'Our domains', type: 'domain', terms: ['Example.COM', 'bücher.de', 'example.com.'], severity: 'high' });
    expect(res.statusCode).toBe(201);
    expect(res.headers.etag).toBe('"1"');
    const body = json(res);
    expect(body).toMatchObject({
      name: 'Our domains',
      description: '',
      type: 'domain',
      terms: ['example.com', 'xn--bcher-kva.de'],
      status: 'active',
      severity: 'high',
      alert_count: 0,
      alerts_open: 0,
      last_match_at: null,
      last_scan_at: null,
      created_by: m.analyst.id,
    });
    const got = await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${body.id}/` });
    expect(json(got)).toEqual(body);
    const again = await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${body.id}/`, headers: { 'if-none-match': got.headers.etag as string } });
    expect(again.statusCode).toBe(304);
  });

  it('refuses a bad term with 400 naming terms.<index>, for each type, and stores nothing', async () => {
    const cases: Array<[string, string[], string]> = [
      ['domain', ['example.com', 'co.uk'], 'terms.1'],
      ['domain', ['github.io'], 'terms.0'],
      ['email', ['not-an-email'], 'terms.0'],
      ['username', ['two words'], 'terms.0'],
      ['keyword', ['ok word', 'ab'], 'terms.1'],
      ['ip', ['10.0.0.0/8', '300.0.0.1'], 'terms.1'],
    ];
    const before = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/' })).count;
    for (const [type, terms, field] of cases) {
      const res = await create({ name: `bad ${type}`, type, terms });
      expect(res.statusCode, `${type} ${terms}`).toBe(400);
      expect(json(res).errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect((await create({ name: 'none', type: 'keyword', terms: [] })).statusCode).toBe(400);
    expect((await create({ name: 'weird', type: 'phone', terms: ['123'] })).statusCode).toBe(400);
    expect(json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/' })).count).toBe(before);
  });

  it('lists with filters, search over name and terms, and ordering', async () => {
    await create({ name: 'Executives', type: 'email', terms: ['CEO@Example.com'], severity: 'critical' });
    await create({ name: 'Ranges', type: 'ip', terms: ['203.0.113.77/24', '::ffff:198.51.100.1'], status: 'paused' });
    await create({ name: 'Code names', type: 'keyword', terms: ['Project  Falcon'] });
    const list = (qs: string) => t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${qs}` });
    const ranges = json(await list('?type=ip'));
    expect(ranges.results.map((r: { terms: string[] }) => r.terms)).toEqual([['203.0.113.0/24', '198.51.100.1']]);
    expect(json(await list('?status=paused')).results.map((r: { name: string }) => r.name)).toEqual(['Ranges']);
    expect(json(await list('?severity=critical,high')).count).toBe(2);
    expect(json(await list('?search=falcon')).results.map((r: { name: string }) => r.name)).toEqual(['Code names']);
    expect(json(await list('?search=ceo@example')).results.map((r: { name: string }) => r.name)).toEqual(['Executives']);
    const names = json(await list('?ordering=name')).results.map((r: { name: string }) => r.name);
    expect(names).toEqual([...names].sort());
    expect((await list('?type=phone')).statusCode).toBe(400);
  });

  it('updates with If-Match, normalising new terms for the type, and audits each change', async () => {
    const created = await create({ name: 'Patch me', type: 'username', terms: ['alice'] });
    const id = json(created).id;
    const stale = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${id}/`, payload: { status: 'paused' }, headers: { 'if-match': '"99"' } });
    expect(stale.statusCode).toBe(412);
    const res = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${id}/`, payload: { terms: ['Alice', 'BOB'], status: 'paused' }, headers: { 'if-match': '"1"' } });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toMatchObject({ terms: ['alice', 'bob'], status: 'paused' });
    expect(res.headers.etag).toBe('"2"');
    expect((await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${id}/`, payload: { terms: ['two words'] } })).statusCode).toBe(400);
    const audit = json(await t.as(m.admin, { method: 'GET', url: '/api/v1/audit-log/?target_type=monitor&ordering=created_at&page_size=500' }));
    const mine = audit.results.filter((e: { target_id: string }) => e.target_id === id);
    expect(mine.map((e: { action: string }) => e.action)).toEqual(['monitor.created', 'monitor.updated']);
    expect(mine[1].changes).toEqual({ terms: { from: ['alice'], to: ['alice', 'bob'] }, status: { from: 'active', to: 'paused' } });
  });

  it('lets a viewer read but not write, an analyst write but not delete, an admin delete', async () => {
    expect((await create({ name: 'v', type: 'keyword', terms: ['abc'] }, m.viewer)).statusCode).toBe(403);
    const id = json(await create({ name: 'Delete me', type: 'keyword', terms: ['abc'] })).id;
    expect((await t.as(m.viewer, { method: 'PATCH', url: `/api/v1/monitoring/${id}/`, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.as(m.analyst, { method: 'DELETE', url: `/api/v1/monitoring/${id}/` })).statusCode).toBe(403);
    expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/monitoring/${id}/` })).statusCode).toBe(204);
    expect((await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${id}/` })).statusCode).toBe(404);
  });

  it("answers 404, never 403, for another organization's monitor, and lists none of them", async () => {
    const id = json(await create({ name: 'Private', type: 'keyword', terms: ['secret'] })).id;
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await t.as(other.owner, { method, url: `/api/v1/monitoring/${id}/`, ...(payload ? { payload } : {}) });
      expect(res.statusCode, method).toBe(404);
    }
    expect(json(await t.as(other.owner, { method: 'GET', url: '/api/v1/monitoring/' })).count).toBe(0);
  });

  it('counts the monitors in /organization/usage/ and /leaks/stats/', async () => {
    const count = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/' })).count;
    expect(count).toBeGreaterThan(0);
    expect(json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/organization/usage/' })).monitors).toBe(count);
    expect(json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/leaks/stats/' })).organization).toEqual({ monitors: count, alerts_open: 0, alerts_last_30_days: 0 });
    expect(json(await t.as(other.owner, { method: 'GET', url: '/api/v1/organization/usage/' })).monitors).toBe(0);
  });

  describe('the matcher over ingested records', () => {
    let staff: User;
    let source: string;
    const ingest = (records: object[]) => t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: records });

    beforeAll(async () => {
      staff = (await t.createOrg('enterprise', 'platform', true)).owner;
      source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Matcher dump' } })).id;
    });

    it('raises an alert per (monitor, record, term) in the ingest, counts it in the answer and the figures, and never twice', async () => {
      const domains = json(await create({ name: 'Matched domains', type: 'domain', terms: ['matched.example'], severity: 'critical' }));
      const words = json(await create({ name: 'Matched words', type: 'keyword', terms: ['nightjar'] }));
      const paused = json(await create({ name: 'Paused', type: 'domain', terms: ['matched.example'], status: 'paused' }));
      const elsewhere = json(await t.as(other.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Theirs', type: 'email', terms: ['boss@matched.example'] } }));
      const records = [
        { email: 'boss@matched.example', extra: { codename: 'Nightjar' } },
        { email: 'dev@mail.matched.example' },
        { email: 'nobody@unmatched.example' },
      ];
      const first = await ingest(records);
      expect(first.statusCode).toBe(200);
      // matched.example: 2 records; nightjar: 1; theirs: 1 (another organization's monitor, from the same index).
      expect(json(first)).toMatchObject({ accepted: 3, alerts_raised: 4 });
      const again = await ingest(records);
      expect(json(again)).toMatchObject({ accepted: 0, duplicates: 3, alerts_raised: 0 });
      const read = async (id: string, as: User = m.viewer) => json(await t.as(as, { method: 'GET', url: `/api/v1/monitoring/${id}/` }));
      expect(await read(domains.id)).toMatchObject({ alert_count: 2, alerts_open: 2, last_match_at: expect.any(String) });
      expect(await read(words.id)).toMatchObject({ alert_count: 1 });
      expect(await read(paused.id)).toMatchObject({ alert_count: 0, last_match_at: null });
      expect(await read(elsewhere.id, other.owner)).toMatchObject({ alert_count: 1 });
      const alerts = await t.db.selectFrom('monitor_alerts').select(['monitor_id', 'matched_term', 'matched_field', 'severity', 'status']).where('monitor_id', 'in', [domains.id, words.id]).orderBy('matched_field').execute();
      expect(alerts).toEqual([
        { monitor_id: domains.id, matched_term: 'matched.example', matched_field: 'domain', severity: 'critical', status: 'new' },
        { monitor_id: domains.id, matched_term: 'matched.example', matched_field: 'domain', severity: 'critical', status: 'new' },
        // A monitor without a severity gives its alerts their record's: an e-mail alone is low.
        { monitor_id: words.id, matched_term: 'nightjar', matched_field: 'extra.codename', severity: 'low', status: 'new' },
      ]);
      const stats = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/leaks/stats/' }));
      expect(stats.organization).toMatchObject({ alerts_open: 3, alerts_last_30_days: 3 });
    });

    it('matches with monitors as they are now: a new monitor, a paused one and a changed term take effect on the next batch', async () => {
      const mon = json(await create({ name: 'Changing', type: 'keyword', terms: ['kestrel'] }));
      expect(json(await ingest([{ email: 'k1@birds.example', full_name: 'Kestrel One' }])).alerts_raised).toBe(1);
      await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${mon.id}/`, payload: { status: 'paused' } });
      expect(json(await ingest([{ email: 'k2@birds.example', full_name: 'Kestrel Two' }])).alerts_raised).toBe(0);
      await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${mon.id}/`, payload: { status: 'active', terms: ['merlin'] } });
      expect(json(await ingest([{ email: 'k3@birds.example', full_name: 'Kestrel Merlin' }])).alerts_raised).toBe(1);
      expect((await t.db.selectFrom('monitor_alerts').select('matched_term').where('monitor_id', '=', mon.id).orderBy('matched_term').execute()).map((a) => a.matched_term)).toEqual(['kestrel', 'merlin']);
    });

    it('lists, reads and triages alerts: filters, the record embedded, If-Match, bulk with missing ids, roles, 404 across organizations', async () => {
      const mon = json(await create({ name: 'Triage', type: 'domain', terms: ['triage.example'], severity: 'low' }));
      expect(json(await ingest([{ email: 'a@triage.example' }, { email: 'b@triage.example', password: 'hunter2hunter2' }, { email: 'c@triage.example' }])).alerts_raised).toBe(3);
      const list = (qs: string, as: User = m.viewer) => t.as(as, { method: 'GET', url: `/api/v1/monitoring/alerts/${qs}` });
      const mine = json(await list(`?monitor=${mon.id}&ordering=created_at`));
      expect(mine.count).toBe(3);
      const first = mine.results[0];
      expect(first).toMatchObject({ monitor: { id: mon.id, name: 'Triage' }, severity: 'low', status: 'new', matched_term: 'triage.example', matched_field: 'domain', incident: null, note: '' });
      expect(first.leak_record).toMatchObject({ email: expect.stringMatching(/@triage\.example$/), domain: 'triage.example', source: { id: source, name: 'Matcher dump' } });
      expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/alerts/` })).count).toBe(3);
      const one = await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${first.id}/` });
      expect(json(one)).toEqual(first);
      expect(one.headers.etag).toBe('"1"');
      expect((await t.as(m.viewer, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${first.id}/`, payload: { status: 'acknowledged' } })).statusCode).toBe(403);
      expect((await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${first.id}/`, payload: { status: 'acknowledged' }, headers: { 'if-match': '"7"' } })).statusCode).toBe(412);
      const patched = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${first.id}/`, payload: { status: 'acknowledged', note: 'looking' } });
      expect(json(patched)).toMatchObject({ status: 'acknowledged', note: 'looking' });
      expect(json(await list(`?monitor=${mon.id}&status=acknowledged`)).count).toBe(1);
      expect((await list('?status=closed')).statusCode).toBe(400);
      const missing = '0193e0a4-0000-7000-8000-000000000abc';
      const theirs = json(await t.as(other.owner, { method: 'GET', url: '/api/v1/monitoring/alerts/' })).results[0].id;
      const bulk = await t.as(m.analyst, { method: 'POST', url: '/api/v1/monitoring/alerts/bulk/', payload: { ids: [...mine.results.map((a: { id: string }) => a.id), missing, theirs], status: 'resolved', note: 'done' } });
      expect(bulk.statusCode).toBe(200);
      expect(json(bulk)).toEqual({ updated: 3, not_found: [missing, theirs] });
      expect(json(await list(`?monitor=${mon.id}&status=resolved`)).count).toBe(3);
      expect(json(await t.as(other.owner, { method: 'GET', url: `/api/v1/monitoring/alerts/${theirs}/` })).status).toBe('new');
      expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/` })).alerts_open).toBe(0);
      expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/monitoring/alerts/${first.id}/` })).statusCode).toBe(404);
      expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/alerts/` })).statusCode).toBe(404);
      expect((await t.as(m.viewer, { method: 'POST', url: '/api/v1/monitoring/alerts/bulk/', payload: { ids: [first.id], status: 'new' } })).statusCode).toBe(403);
      const audit = json(await t.as(m.admin, { method: 'GET', url: '/api/v1/audit-log/?target_type=alert&page_size=500' })).results.map((e: { action: string }) => e.action);
      expect(audit).toEqual(expect.arrayContaining(['alert.updated', 'alerts.triaged']));
    });

    it('sums up in /monitoring/stats/: monitors by status, alerts by status and severity, 30 days of alerts with zeros', async () => {
      const stats = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/stats/' }));
      const monitors = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/?page_size=500' })).results;
      expect(stats.monitors).toEqual({
        active: monitors.filter((x: { status: string }) => x.status === 'active').length,
        paused: monitors.filter((x: { status: string }) => x.status === 'paused').length,
      });
      const alerts = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/alerts/?page_size=500' })).results as Array<{ status: string; severity: string; created_at: string }>;
      const tally = (key: 'status' | 'severity', values: string[]) => Object.fromEntries(values.map((v) => [v, alerts.filter((a) => a[key] === v).length]));
      expect(stats.alerts.by_status).toEqual(tally('status', ['new', 'acknowledged', 'resolved', 'false_positive']));
      expect(stats.alerts.by_severity).toEqual(tally('severity', ['low', 'medium', 'high', 'critical']));
      expect(stats.alerts_by_day).toHaveLength(30);
      const today = t.clock.now().toISOString().slice(0, 10);
      expect(stats.alerts_by_day.at(-1)).toEqual({ date: today, count: alerts.length });
      expect(stats.alerts_by_day.slice(0, 29).every((d: { count: number }) => d.count === 0)).toBe(true);
      expect(json(await t.as(other.owner, { method: 'GET', url: '/api/v1/monitoring/stats/' })).alerts.by_status.new).toBe(1);
    });

    it('escalates an alert to a new incident, or merges it into one, once', async () => {
      const mon = json(await create({ name: 'Escalations', type: 'domain', terms: ['escalate.example'], severity: 'high' }));
      expect(json(await ingest([{ email: 'x@escalate.example', ip: '203.0.113.66' }, { email: 'y@escalate.example' }])).alerts_raised).toBe(2);
      const [a, b] = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/?monitor=${mon.id}&ordering=created_at` })).results;
      const escalate = (id: string, payload?: object, as: User = m.analyst) =>
        t.as(as, { method: 'POST', url: `/api/v1/monitoring/alerts/${id}/escalate/`, ...(payload ? { payload } : {}) });
      expect((await escalate(a.id, undefined, m.viewer)).statusCode).toBe(403);
      const made = await escalate(a.id);
      expect(made.statusCode, made.body).toBe(201);
      const incident = json(made);
      expect(incident).toMatchObject({ title: 'Escalations: escalate.example in Matcher dump', severity: 'high', source_alert: a.id, ioc_count: 3, status: 'open' });
      const iocs = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/incidents/${incident.id}/iocs/?ordering=created_at` })).results.map((i: { type: string; value: string }) => `${i.type}:${i.value}`);
      expect(iocs.sort()).toEqual([`domain:escalate.example`, `email:${a.leak_record.email}`, 'ipv4:203.0.113.66'].sort());
      expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${a.id}/` }))).toMatchObject({ status: 'acknowledged', incident: incident.id });
      const twice = await escalate(a.id);
      expect(twice.statusCode).toBe(409);
      // Merged: the other record's e-mail is new, its domain a duplicate.
      const merged = await escalate(b.id, { incident: incident.id });
      expect(merged.statusCode).toBe(200);
      expect(json(merged)).toMatchObject({ id: incident.id, ioc_count: 4 });
      const events = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/incidents/${incident.id}/events/?kind=alert_merged` })).results;
      expect(events).toHaveLength(1);
      expect(events[0].changes).toMatchObject({ alert: b.id, matched_term: 'escalate.example' });
      expect((await escalate(b.id, { incident: incident.id })).statusCode).toBe(409);
      // Another organization's incident is not there to merge into; nothing changes.
      const theirs = json(await t.as(other.owner, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'theirs' } }));
      const c = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/?monitor=${mon.id}&status=new` })).results;
      expect(c).toHaveLength(0);
      const fresh = json(await create({ name: 'More', type: 'keyword', terms: ['escalator'] }));
      await ingest([{ email: 'z@lift.example', full_name: 'Escalator Man' }]);
      const d = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${fresh.id}/alerts/` })).results[0];
      expect((await escalate(d.id, { incident: theirs.id })).statusCode).toBe(404);
      expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${d.id}/` }))).toMatchObject({ status: 'new', incident: null });
    });

    it('removes a monitor with its alerts', async () => {
      const mon = json(await create({ name: 'Short lived', type: 'keyword', terms: ['ephemeral'] }));
      expect(json(await ingest([{ email: 'e@short.example', full_name: 'Ephemeral' }])).alerts_raised).toBe(1);
      expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/monitoring/${mon.id}/` })).statusCode).toBe(204);
      expect(await t.db.selectFrom('monitor_alerts').select('id').where('monitor_id', '=', mon.id).execute()).toEqual([]);
    });

    it('lists each alert exactly as its own GET shows it, field by field and in order (the list JSON is written by the database)', async () => {
      const odd = 'a"b\\c\n\t\u0001\u2028é😀</script>';
      const mon = json(await create({ name: `Odd ${odd}`, type: 'domain', terms: ['odd-json.example'], severity: 'critical' }));
      await ingest([{ email: 'o@odd-json.example', username: odd, full_name: odd, password: 'pw-odd-1', extra: { [`k${odd}`]: odd } }, { email: 'bare@odd-json.example' }]);
      const page = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/alerts/` }));
      expect(page.count).toBe(2);
      const [first] = page.results;
      await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${first.id}/`, payload: { status: 'acknowledged', note: odd } });
      for (const listed of json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/?monitor=${mon.id}` })).results) {
        const alone = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${listed.id}/` }));
        expect(listed).toEqual(alone);
        expect(Object.keys(listed)).toEqual(Object.keys(AlertSchema.properties));
      }
    });

    it("shows each alert's record as GET /leaks/records/<id>/ does, its source's new name too once renamed", async () => {
      const src = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Before the rename' } }));
      const mon = json(await create({ name: 'Renamed source', type: 'domain', terms: ['renamed-source.example'] }));
      await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${src.id}/records/`, payload: [{ email: 'r@renamed-source.example', password: 'pw-renamed-1', extra: { k: 'v' } }] });
      const shown = async () => {
        const listed = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/?monitor=${mon.id}` })).results;
        expect(listed).toHaveLength(1);
        const alone = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${listed[0].id}/` }));
        const record = json(await t.as(staff, { method: 'GET', url: `/api/v1/leaks/records/${listed[0].leak_record.id}/` }));
        expect(listed[0].leak_record).toEqual(record);
        expect(alone.leak_record).toEqual(record);
        return record.source.name as string;
      };
      expect(await shown()).toBe('Before the rename');
      const renamed = await t.as(staff, { method: 'PATCH', url: `/api/v1/leaks/sources/${src.id}/`, payload: { name: 'After the rename' }, headers: { 'if-match': '"1"' } });
      expect(renamed.statusCode).toBe(200);
      expect(await shown()).toBe('After the rename');
    });

    it('keeps alert_count, alerts_open and the alert list counts true to the alerts through every change, folded or not', async () => {
      const repo = new MonitoringRepository(t.app.deps.database.dialect);
      const other = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Counted dump' } })).id as string;
      const into = (src: string, names: string[]) => t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${src}/records/`, payload: names.map((n) => ({ email: `${n}@counted.example` })) });
      const mon = json(await create({ name: 'Counted', type: 'domain', terms: ['counted.example'], severity: 'high' }));
      await into(source, ['a', 'b', 'c']);
      await into(other, ['d', 'e']);
      await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/${mon.id}/`, payload: { severity: 'low' } });
      await into(source, ['f']);
      const ids = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/alerts/?ordering=created_at` })).results.map((a: { id: string }) => a.id) as string[];
      expect(ids).toHaveLength(6);
      await t.as(m.analyst, { method: 'POST', url: '/api/v1/monitoring/alerts/triage/', payload: { ids: ids.slice(0, 2), status: 'resolved' } });
      await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${ids[2]}/`, payload: { status: 'acknowledged', note: 'looking' } });

      // Every answer against the alerts themselves.
      const check = async () => {
        const alerts = await t.db.selectFrom('monitor_alerts').select(['status', 'severity']).where('monitor_id', '=', mon.id).execute();
        const figures = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/` }));
        expect(figures).toMatchObject({ alert_count: alerts.length, alerts_open: alerts.filter((a) => ['new', 'acknowledged'].includes(a.status)).length });
        for (const [qs, keep] of [
          ['', () => true],
          ['?status=new', (a: (typeof alerts)[0]) => a.status === 'new'],
          ['?status=new,acknowledged&severity=high', (a: (typeof alerts)[0]) => a.status !== 'resolved' && a.severity === 'high'],
          ['?severity=low', (a: (typeof alerts)[0]) => a.severity === 'low'],
          ['?status=resolved&severity=high,low', (a: (typeof alerts)[0]) => a.status === 'resolved'],
        ] as const) {
          const page = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/alerts/${qs}` }));
          expect(page.count, qs).toBe(alerts.filter(keep).length);
          const sep = qs ? '&' : '?';
          expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/alerts/${qs}${sep}monitor=${mon.id}` })).count, qs).toBe(alerts.filter(keep).length);
        }
        const { kept, recounted } = await countersAndRecounts(t.db);
        expect(Object.fromEntries(Object.entries(kept).filter(([k]) => k.startsWith('alerts ')))).toEqual(Object.fromEntries(Object.entries(recounted).filter(([k]) => k.startsWith('alerts '))));
        return alerts.length;
      };
      expect(await check()).toBe(6);
      // A leak source's deletion takes its records' alerts with it.
      expect((await t.as(staff, { method: 'DELETE', url: `/api/v1/leaks/sources/${other}/` })).statusCode).toBe(204);
      expect(await check()).toBe(4);
      const rows = () => t.db.selectFrom('monitor_alert_counts').select('n').where('monitor_id', '=', mon.id).execute();
      expect((await rows()).length).toBeGreaterThan(3);
      while ((await repo.foldAlertCounts(t.db, 1)) > 0);
      // One row per (status, severity) left, and the same answers.
      expect((await rows()).length).toBe(new Set((await t.db.selectFrom('monitor_alerts').select(['status', 'severity']).where('monitor_id', '=', mon.id).execute()).map((a) => `${a.status} ${a.severity}`)).size);
      expect(await check()).toBe(4);
      expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/monitoring/${mon.id}/` })).statusCode).toBe(204);
      expect((await rows()).reduce((sum, r) => sum + Number(r.n), 0)).toBe(0);
      while ((await repo.foldAlertCounts(t.db)) > 0);
      expect(await rows()).toEqual([]);
    });
  });
});
