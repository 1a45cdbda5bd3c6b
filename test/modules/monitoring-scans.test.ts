import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp, type TestOrg, testDatabaseUrl } from '../helpers/build-app.js';

/** Records already in the corpus before any monitor: what a backfill must find. */
const CORPUS = [
  { email: 'ceo@acme.example', username: 'BigBoss', ip: '203.0.113.10' },
  { email: 'dev@mail.acme.example', extra: { project: 'Operation Nightjar' } },
  { email: 'ops@acme.example.net' },
  { email: 'someone@other.example', ip: '203.0.113.200' },
  { email: 'x@elsewhere.example', username: 'bigboss', full_name: 'The Nightjar Crew' },
  { email: 'y@elsewhere.example', ip: '198.51.100.7' },
];

describe('monitor scans (API.md section 4): backfill, re-scan, durable jobs', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  const m = {} as Record<Role, User>;
  const create = (body: object, as: User = m.analyst) => t.as(as, { method: 'POST', url: '/api/v1/monitoring/', payload: body });
  const alertsOf = async (id: string) =>
    (await t.db.selectFrom('monitor_alerts').select(['matched_term', 'matched_field']).where('monitor_id', '=', id).orderBy('matched_term').orderBy('matched_field').execute()).map((a) => `${a.matched_term}@${a.matched_field}`);
  const scansOf = async (id: string, as: User = m.viewer) => json(await t.as(as, { method: 'GET', url: `/api/v1/monitoring/${id}/scans/` }));

  beforeAll(async () => {
    t = await buildTestApp({}, { scans: { chunk: 2 } });
    const team = await t.createTeam('enterprise', 'scanners', 'scan');
    org = team.org;
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'outsiders');
    const staff = (await t.createOrg('enterprise', 'scan-platform', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Old dump' } })).id;
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: CORPUS });
    expect(json(res)).toMatchObject({ accepted: CORPUS.length, alerts_raised: 0 });
  });
  afterAll(() => t.close());

  it('backfills each type of new monitor from the corpus indexes, once, and records its completion', async () => {
    const cases: Array<[object, string[]]> = [
      [{ type: 'domain', terms: ['acme.example'] }, ['acme.example@domain', 'acme.example@domain']],
      [{ type: 'email', terms: ['ceo@acme.example', 'y@elsewhere.example', 'nobody@acme.example'] }, ['ceo@acme.example@email', 'y@elsewhere.example@email']],
      [{ type: 'username', terms: ['bigboss'] }, ['bigboss@username', 'bigboss@username']],
      [{ type: 'ip', terms: ['203.0.113.0/24'] }, ['203.0.113.0/24@ip', '203.0.113.0/24@ip']],
      [{ type: 'keyword', terms: ['nightjar'] }, ['nightjar@extra.project', 'nightjar@full_name']],
    ];
    const made: Array<{ id: string; want: string[] }> = [];
    for (const [body, want] of cases) {
      const res = await create({ name: `Backfill ${(body as { type: string }).type}`, ...body });
      expect(res.statusCode).toBe(201);
      const monitor = json(res);
      const scans = await scansOf(monitor.id);
      expect(scans.results).toEqual([expect.objectContaining({ monitor: monitor.id, reason: 'created', status: 'queued', records_scanned: 0, alerts_raised: 0, started_at: null })]);
      made.push({ id: monitor.id, want });
    }
    expect(await t.services.monitoring.scans.runPending()).toBe(cases.length);
    for (const { id, want } of made) {
      expect(await alertsOf(id)).toEqual(want);
      const [scan] = (await scansOf(id)).results;
      expect(scan).toMatchObject({ status: 'completed', alerts_raised: want.length, started_at: expect.any(String), finished_at: expect.any(String) });
      const monitor = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${id}/` }));
      expect(monitor).toMatchObject({ alert_count: want.length, last_scan_at: scan.finished_at });
    }
    // Exact types read only what their index ranges hold; a keyword reads every record.
    const scanned = await Promise.all(made.map(async ({ id }) => (await scansOf(id)).results[0].records_scanned));
    expect(scanned).toEqual([2, 2, 2, 2, CORPUS.length]);
    // Each new alert, and each completed scan, is an event of the organization, written with it.
    const events = await t.db.selectFrom('events').select(['type', 'data', 'organization_id']).execute();
    expect(events.filter((e) => e.type === 'alert.created')).toHaveLength(made.reduce((n, x) => n + x.want.length, 0));
    const completed = events.filter((e) => e.type === 'monitor.scan_completed').map((e) => JSON.parse(e.data));
    expect(completed.map((s) => s.monitor).sort()).toEqual(made.map((x) => x.id).sort());
    expect(events.every((e) => e.organization_id === org.id)).toBe(true);
    const alertEvent = JSON.parse(events.find((e) => e.type === 'alert.created')?.data as string);
    expect(alertEvent).toMatchObject({ monitor: { id: made[0]?.id }, status: 'new', leak_record: { email: expect.any(String), source: { name: 'Old dump' } } });
    // Nothing left to run.
    expect(await t.services.monitoring.scans.runPending()).toBe(0);
  });

  it('skips the backfill with backfill: false, and for a paused monitor', async () => {
    const quiet = json(await create({ name: 'No backfill', type: 'domain', terms: ['acme.example'], backfill: false }));
    const paused = json(await create({ name: 'Paused', type: 'domain', terms: ['acme.example'], status: 'paused' }));
    for (const id of [quiet.id, paused.id]) expect((await scansOf(id)).count).toBe(0);
    expect(await t.services.monitoring.scans.runPending()).toBe(0);
    expect(await alertsOf(quiet.id)).toEqual([]);
    expect((await create({ name: 'Bad', type: 'domain', terms: ['acme.example'], backfill: 'soon' })).statusCode).toBe(400);
  });

  it('queues a re-scan with 202 {scan_id, status}, one queued at a time, that never duplicates an alert', async () => {
    const mon = json(await create({ name: 'Rescan', type: 'domain', terms: ['acme.example'], backfill: false }));
    const scan = (as: User = m.analyst) => t.as(as, { method: 'POST', url: `/api/v1/monitoring/${mon.id}/scan/` });
    expect((await scan(m.viewer)).statusCode).toBe(403);
    expect((await scan(other.owner)).statusCode).toBe(404);
    const first = await scan();
    expect(first.statusCode).toBe(202);
    const body = json(first);
    expect(body).toEqual({ scan_id: expect.any(String), status: 'queued' });
    expect(first.headers.location).toBe(`/api/v1/monitoring/${mon.id}/scans/${body.scan_id}/`);
    // A second request while the first waits joins it.
    expect(json(await scan()).scan_id).toBe(body.scan_id);
    const one = await t.as(m.viewer, { method: 'GET', url: first.headers.location as string });
    expect(json(one)).toMatchObject({ id: body.scan_id, reason: 'requested', status: 'queued' });
    await t.services.monitoring.scans.runPending();
    expect(await alertsOf(mon.id)).toHaveLength(2);
    const again = json(await scan());
    expect(again.scan_id).not.toBe(body.scan_id);
    await t.services.monitoring.scans.runPending();
    expect(json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/${again.scan_id}/` }))).toMatchObject({ status: 'completed', alerts_raised: 0, records_scanned: 2 });
    expect(await alertsOf(mon.id)).toHaveLength(2);
    const listed = await scansOf(mon.id);
    expect(listed.results.map((s: { id: string }) => s.id)).toEqual([again.scan_id, body.scan_id]);
    // Another organization sees neither the monitor's scans nor one of them.
    expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/` })).statusCode).toBe(404);
    expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/${body.scan_id}/` })).statusCode).toBe(404);
    const audit = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/audit-log/?target_type=monitor&target_id=${mon.id}` })).results.map((e: { action: string }) => e.action);
    expect(audit.filter((a: string) => a === 'monitor.scan_requested')).toHaveLength(3);
  });

  it('keeps matching as ingest does: records ingested after the scan started are alerted on once', async () => {
    const mon = json(await create({ name: 'Both ways', type: 'keyword', terms: ['kingfisher'] }));
    const staff = (await t.createOrg('enterprise', 'scan-platform-2', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'New dump' } })).id;
    expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email: 'k@birds.example', full_name: 'Kingfisher' }] })).alerts_raised).toBe(1);
    await t.services.monitoring.scans.runPending();
    expect(await alertsOf(mon.id)).toEqual(['kingfisher@full_name']);
    expect((await scansOf(mon.id)).results[0]).toMatchObject({ status: 'completed', alerts_raised: 0 });
  });
});

describe('a scan is a durable job', () => {
  const dir = mkdtempSync(join(tmpdir(), 'threatmon-scan-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('goes on from its last chunk after its process stops, without reading anything twice', async () => {
    const url = TEST_PG_URL ? await testDatabaseUrl() : `sqlite:${join(dir, 'scan.db')}`;
    const first = await buildTestApp({ THREATMON_DATABASE_URL: url }, { scans: { chunk: 2, leaseMs: 60_000 } });
    const org = await first.createOrg('enterprise', 'durable');
    const staff = (await first.createOrg('enterprise', 'durable-platform', true)).owner;
    const source = json(await first.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Big dump' } })).id;
    const records = Array.from({ length: 9 }, (_, i) => ({ email: `user${i}@durable.example` }));
    await first.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: records });
    const mon = json(await first.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Durable', type: 'domain', terms: ['durable.example'] } }));
    // One chunk committed, then the process is gone with the scan still leased to it.
    expect(await first.services.monitoring.scans.runNext({ maxChunks: 1 })).toBe(true);
    const [midway] = json(await first.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/` })).results;
    expect(midway).toMatchObject({ status: 'running', records_scanned: 2, alerts_raised: 2 });
    await first.close();

    const second = await buildTestApp({ THREATMON_DATABASE_URL: url }, { scans: { chunk: 2, leaseMs: 60_000 } });
    try {
      // Within the lease nobody else takes it; once it has run out, the new process goes on with it.
      expect(await second.services.monitoring.scans.runNext()).toBe(false);
      second.clock.advance(61);
      expect(await second.services.monitoring.scans.runPending()).toBe(1);
      const [done] = json(await second.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/` })).results;
      expect(done).toMatchObject({ id: midway.id, status: 'completed', records_scanned: 9, alerts_raised: 9 });
      expect(Number((await second.db.selectFrom('monitor_alerts').select((eb) => eb.fn.countAll().as('n')).where('monitor_id', '=', mon.id).executeTakeFirstOrThrow()).n)).toBe(9);
    } finally {
      await second.close();
    }
  });

  it('runs in the background of a server with jobs on', async () => {
    const t = await buildTestApp({}, { jobs: true, scans: { chunk: 1 } });
    try {
      const org = await t.createOrg('enterprise', 'background');
      const staff = (await t.createOrg('enterprise', 'background-platform', true)).owner;
      const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Dump' } })).id;
      await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email: 'a@bg.example' }, { email: 'b@bg.example' }] });
      const mon = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'BG', type: 'domain', terms: ['bg.example'] } }));
      await vi.waitFor(async () => expect(json(await t.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/` })).last_scan_at).not.toBeNull(), { timeout: 20_000, interval: 20 });
      expect(json(await t.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/` })).alert_count).toBe(2);
      // Two chunks, two count rows of one key: the alert counts' job folds them into one (it runs every 5 s).
      await vi.waitFor(async () => expect(await t.db.selectFrom('monitor_alert_counts').select('n').where('monitor_id', '=', mon.id).execute()).toEqual([{ n: 2 }]), { timeout: 20_000, interval: 50 });
      expect(json(await t.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/` })).alert_count).toBe(2);
    } finally {
      await t.close();
    }
  });

  it('lets go of its scan when its runner stops: another process goes on with it at once, not after the lease', async () => {
    const t = await buildTestApp({}, { scans: { chunk: 1, leaseMs: 60_000 } });
    try {
      const org = await t.createOrg('enterprise', 'stopping');
      const staff = (await t.createOrg('enterprise', 'stopping-platform', true)).owner;
      const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Dump' } })).id;
      await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email: 'a@stop.example' }, { email: 'b@stop.example' }] });
      const mon = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Stop', type: 'domain', terms: ['stop.example'] } }));
      const scans = t.services.monitoring.scans;
      expect(await scans.runNext({ maxChunks: 1 })).toBe(true);
      // Shutting down: the runner takes the scan back and lets go of it instead of holding it for a minute.
      await scans.stop();
      expect(await scans.runNext()).toBe(true);
      const lease = await t.db.selectFrom('monitor_scans').select(['status', 'lease_until', 'records_scanned']).where('monitor_id', '=', mon.id).executeTakeFirstOrThrow();
      expect(lease).toMatchObject({ status: 'running', lease_until: t.clock.now().toISOString() });
      t.clock.advance(0.001);
      scans.start({ error: () => undefined });
      await vi.waitFor(async () => expect(json(await t.as(org.owner, { method: 'GET', url: `/api/v1/monitoring/${mon.id}/scans/` })).results[0]).toMatchObject({ status: 'completed', records_scanned: 2, alerts_raised: 2 }), { timeout: 20_000, interval: 20 });
      await scans.stop();
    } finally {
      await t.close();
    }
  });
});
