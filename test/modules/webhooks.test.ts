import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import type { IncidentOut } from '../../src/modules/incidents/incidents.schemas.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebhooksRepository } from '../../src/modules/webhooks/webhooks.repository.js';
import { send } from '../../src/modules/webhooks/webhooks.sender.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_S } from '../../src/modules/webhooks/webhooks.service.js';
import type { Role, User } from '../../src/modules/identity/index.js';
import { EVENT_TYPES } from '../../src/modules/events/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';
import { Receiver } from '../helpers/receiver.js';

const ALL = [...EVENT_TYPES];

describe('webhooks (API.md section 7)', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let receiver: Receiver;
  let base: string;
  const m = {} as Record<Role, User>;
  const register = (body: object, as: User = m.admin) => t.as(as, { method: 'POST', url: '/api/v1/webhooks/', payload: body });
  const deliver = () => t.services.webhooks.deliverDue();
  // Standard Webhooks verifiers check the timestamp against their clock: theirs is the test clock.
  const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t.clock.now());
    try {
      return new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string; type: string; timestamp: string; data: any };
    } finally {
      vi.useRealTimers();
    }
  };

  beforeAll(async () => {
    receiver = new Receiver();
    base = await receiver.start();
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    const team = await t.createTeam('enterprise', 'hooked', 'hook');
    org = team.org;
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'unhooked');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  afterEach(() => {
    receiver.answer = () => 200;
  });

  it('registers a webhook for admins only, showing its secret once and never logging it', async () => {
    expect((await register({ url: `${base}/x`, events: ['incident.created'] }, m.analyst)).statusCode).toBe(403);
    const res = await register({ url: `${base}/once`, events: ['incident.created'], description: 'SOAR' });
    expect(res.statusCode).toBe(201);
    const made = json(res);
    expect(made).toMatchObject({ url: `${base}/once`, events: ['incident.created'], is_active: true, failure_count: 0, last_delivery_at: null });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const read = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${made.id}/` }));
    expect(read).not.toHaveProperty('secret');
    expect(JSON.stringify(json(await t.as(m.admin, { method: 'GET', url: '/api/v1/webhooks/' })))).not.toContain(made.secret);
    expect(JSON.stringify(json(await t.as(m.admin, { method: 'GET', url: '/api/v1/audit-log/?target_type=webhook' })))).not.toContain(made.secret);
    expect((await t.as(m.analyst, { method: 'GET', url: '/api/v1/webhooks/' })).statusCode).toBe(403);
    expect((await t.as(other.owner, { method: 'GET', url: `/api/v1/webhooks/${made.id}/` })).statusCode).toBe(404);
    expect((await t.as(other.owner, { method: 'DELETE', url: `/api/v1/webhooks/${made.id}/` })).statusCode).toBe(404);
    for (const [body, field] of [
      [{ url: `${base}/x`, events: ['incident.deleted'] }, 'events'],
      [{ url: 'ftp://example.com/', events: ['incident.created'] }, 'url'],
      [{ url: 'not a url', events: ['incident.created'] }, 'url'],
    ] as const) {
      const bad = await register(body);
      expect(bad.statusCode).toBe(400);
      expect(JSON.stringify(json(bad).errors)).toContain(field);
    }
    expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${made.id}/` })).statusCode).toBe(204);
  });

  it('delivers each event type, produced by its module, signed so that the standardwebhooks verifier accepts it', async () => {
    const hook = json(await register({ url: `${base}/all`, events: ALL }));
    const theirs = json(await t.as(other.owner, { method: 'POST', url: '/api/v1/webhooks/', payload: { url: `${base}/theirs`, events: ALL } }));
    const start = receiver.received.length;
    const incident = json(await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Hooked', severity: 'high' } }));
    await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/incidents/${incident.id}/`, payload: { severity: 'critical' } });
    await t.as(m.analyst, { method: 'POST', url: `/api/v1/incidents/${incident.id}/iocs/`, payload: [{ type: 'domain', value: 'evil.example' }, { type: 'ipv4', value: '203.0.113.9' }] });
    const mon = json(await t.as(m.analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Hooked', type: 'domain', terms: ['hooked.example'] } }));
    const staff = (await t.createOrg('enterprise', 'hook-platform', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Hook dump' } })).id;
    await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email: 'a@hooked.example' }] });
    await t.services.monitoring.scans.runPending();
    const iocs = json(await t.as(m.analyst, { method: 'GET', url: `/api/v1/incidents/${incident.id}/iocs/` })).results as Array<{ id: string; value: string }>;
    await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/incidents/${incident.id}/iocs/${iocs.find((i) => i.value === 'evil.example')!.id}/`, payload: { description: 'C2' } });
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/incidents/${incident.id}/iocs/${iocs.find((i) => i.value === '203.0.113.9')!.id}/` });
    const alert = json(await t.as(m.analyst, { method: 'GET', url: '/api/v1/monitoring/alerts/' })).results[0];
    await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${alert.id}/`, payload: { status: 'acknowledged' } });
    const bug = json(await t.as(m.analyst, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'Hooked bug', kind: 'web_bug' } }));
    // An indicator of the organization names the hit's address: an indicator.matched event too.
    const at = new Date().toISOString();
    await t.db.insertInto('indicators').values({ id: randomUUID(), organization_id: m.analyst.organization_id, type: 'ipv4', value: '127.0.0.1', stix_id: null, name: null, confidence: 70, tlp: 'amber', labels: '[]', valid_until: null, modified: null, revoked: false, false_positive: false, note: null, first_seen: at, last_seen: at, created_at: at, updated_at: at }).execute();
    await t.inject({ method: 'GET', url: new URL(bug.trigger_url).pathname, remoteAddress: '127.0.0.1' });
    await t.services.trackingTokens.settled();
    await deliver();
    const got = receiver.received.slice(start).filter((r) => r.path === '/all');
    const events = got.map((r) => verify(hook.secret, r));
    expect(events.map((e) => e.type).sort()).toEqual(
      ['alert.created', 'alert.updated', 'incident.created', 'incident.updated', 'ioc.created', 'ioc.created', 'ioc.updated', 'ioc.deleted', 'monitor.scan_completed', 'tracking_token.exposed', 'indicator.matched'].sort(),
    );
    for (const [i, e] of events.entries()) expect(got[i]?.headers['webhook-id']).toBe(e.id);
    // Each body is what the OpenAPI document's webhooks section says it is.
    const doc = json(await t.inject({ method: 'GET', url: '/api/schema/' }));
    const ajv = new Ajv2020({ strict: false, validateFormats: true });
    addFormats.default(ajv);
    ajv.addSchema(doc, 'openapi');
    for (const e of events) {
      const validate = ajv.getSchema(`openapi#/webhooks/${e.type.replace('/', '~1')}/post/requestBody/content/application~1json/schema`);
      expect(validate, e.type).toBeDefined();
      expect(validate?.(e) ? [] : validate?.errors, e.type).toEqual([]);
    }
    expect(events.find((e) => e.type === 'incident.created')?.data).toMatchObject({ id: incident.id, title: 'Hooked', severity: 'high' });
    expect(events.find((e) => e.type === 'incident.updated')?.data).toMatchObject({ id: incident.id, severity: 'critical' });
    expect(events.filter((e) => e.type === 'ioc.created').map((e) => e.data.value).sort()).toEqual(['203.0.113.9', 'evil.example']);
    expect(events.find((e) => e.type === 'ioc.updated')?.data).toMatchObject({ value: 'evil.example', description: 'C2' });
    expect(events.find((e) => e.type === 'ioc.deleted')?.data).toMatchObject({ value: '203.0.113.9' });
    expect(events.find((e) => e.type === 'alert.updated')?.data).toMatchObject({ id: alert.id, status: 'acknowledged' });
    expect(events.find((e) => e.type === 'monitor.scan_completed')?.data).toMatchObject({ monitor: mon.id, status: 'completed' });
    expect(events.find((e) => e.type === 'tracking_token.exposed')?.data).toMatchObject({ token: bug.id, channel: 'http', severity: 'critical', indicator_matches: [{ value: '127.0.0.1', tlp: 'amber' }] });
    expect(events.find((e) => e.type === 'indicator.matched')?.data).toMatchObject({ seen_in: 'tracking_token', tracking_token: bug.id, severity: 'critical', match: { type: 'ipv4', value: '127.0.0.1', field: 'ip', confidence: 70 } });
    // Another organization's webhook hears nothing of this one's changes.
    expect(receiver.received.slice(start).filter((r) => r.path === '/theirs')).toEqual([]);
    expect(json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/` })).last_delivery_at).not.toBeNull();
    const log = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/` }));
    expect(log.count).toBe(events.length);
    expect(log.results[0]).toMatchObject({ attempt: 1, status_code: 200, error: null, event_id: expect.any(String), event_type: expect.any(String) });
    for (const id of [hook.id]) await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${id}/` });
    await t.as(other.owner, { method: 'DELETE', url: `/api/v1/webhooks/${theirs.id}/` });
  });

  it('queues nothing for a change rolled back', async () => {
    const hook = json(await register({ url: `${base}/rollback`, events: ['incident.created'] }));
    await expect(
      t.db.transaction().execute(async (trx) => {
        // Never committed: what it carries is never read (typed as an incident only to be recorded).
        await t.services.outbox.record(trx, [{ organizationId: org.id, type: 'incident.created', data: { id: 'never' } as IncidentOut }]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await t.db.selectFrom('webhook_messages').select('id').where('webhook_id', '=', hook.id).execute()).toEqual([]);
    await deliver();
    expect(receiver.received.filter((r) => r.path === '/rollback')).toEqual([]);
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}/` });
  });

  it('retries a failing receiver on the backoff schedule (8 attempts), then gives up; the clock moves, nothing sleeps', async () => {
    const hook = json(await register({ url: `${base}/failing`, events: ['incident.created'] }));
    const counted = async () => Object.fromEntries((await t.app.deps.metrics.webhookDeliveries.get()).values.map((v) => [v.labels.outcome, v.value]));
    const before = await counted();
    receiver.answer = () => 500;
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Retried' } });
    const message = () => t.db.selectFrom('webhook_messages').selectAll().where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await deliver();
      const msg = await message();
      expect(msg.attempts).toBe(attempt);
      if (attempt === MAX_ATTEMPTS) {
        expect(msg.status).toBe('failed');
        break;
      }
      const wait = (Date.parse(msg.next_attempt_at) - t.clock.now().getTime()) / 1000;
      const delay = RETRY_DELAYS_S[attempt - 1] as number;
      expect(wait).toBeGreaterThanOrEqual(delay * 0.9);
      expect(wait).toBeLessThanOrEqual(delay * 1.1);
      // Not due yet: nothing is sent.
      const before = receiver.received.length;
      await deliver();
      expect(receiver.received.length).toBe(before);
      t.clock.advance(Math.ceil(wait));
    }
    const log = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/?ordering=created_at` })).results;
    expect(log.map((d: { attempt: number }) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(log.every((d: { status_code: number }) => d.status_code === 500)).toBe(true);
    expect(json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/` })).failure_count).toBe(8);
    // /metrics counts them: 7 retried, 1 failed for good.
    const after = await counted();
    expect((after.retried ?? 0) - (before.retried ?? 0)).toBe(7);
    expect((after.failed ?? 0) - (before.failed ?? 0)).toBe(1);
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}/` });
  });

  it('disables a webhook at 50 consecutive failures; active again, its count starts over; test pings never count', async () => {
    const hook = json(await register({ url: `${base}/fifty`, events: ['incident.created'] }));
    await t.db.updateTable('webhooks').set({ failure_count: 49 }).where('id', '=', hook.id).execute();
    receiver.answer = () => 503;
    const ping = json(await t.as(m.admin, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/test/` }));
    expect(ping).toMatchObject({ delivered: false, status_code: 503 });
    expect(json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/` })).failure_count).toBe(49);
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Fiftieth' } });
    await deliver();
    const off = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/` }));
    expect(off).toMatchObject({ is_active: false, failure_count: 50 });
    const on = await t.as(m.admin, { method: 'PATCH', url: `/api/v1/webhooks/${hook.id}/`, payload: { is_active: true } });
    expect(json(on)).toMatchObject({ is_active: true, failure_count: 0 });
    receiver.answer = () => 204;
    const ok = json(await t.as(m.admin, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/test/` }));
    expect(ok).toMatchObject({ delivered: true, status_code: 204, duration_ms: expect.any(Number) });
    const ping2 = receiver.received.at(-1);
    expect(JSON.parse(ping2?.body ?? '{}')).toMatchObject({ type: 'ping', data: { webhook: hook.id } });
    const log = json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/` })).results;
    expect(log.filter((d: { event_type: string }) => d.event_type === 'ping')).toHaveLength(2);
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}/` });
  });

  it('rotates the secret: for 24 hours both sign (two v1 signatures), then the new one alone', async () => {
    const hook = json(await register({ url: `${base}/rotated`, events: ['incident.created'] }));
    const rotated = await t.as(m.admin, { method: 'POST', url: `/api/v1/webhooks/${hook.id}/rotate-secret/` });
    expect(rotated.statusCode).toBe(200);
    const { secret } = json(rotated);
    expect(secret).not.toBe(hook.secret);
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Rotation' } });
    await deliver();
    const first = receiver.received.filter((r) => r.path === '/rotated').at(-1) as { body: string; headers: Record<string, unknown> };
    expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(secret, first).type).toBe('incident.created');
    expect(verify(hook.secret, first).type).toBe('incident.created');
    t.clock.advance(24 * 3600 + 1);
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'After rotation' } });
    await deliver();
    const second = receiver.received.filter((r) => r.path === '/rotated').at(-1) as { body: string; headers: Record<string, unknown> };
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verify(secret, second).type).toBe('incident.created');
    expect(() => verify(hook.secret, second)).toThrow();
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}/` });
  });

  it('follows no redirect: a 3xx is a failed attempt, and its Location is never asked', async () => {
    const hook = json(await register({ url: `${base}/moved`, events: ['incident.created'] }));
    receiver.answer = (r) => (r.path === '/moved' ? 302 : 200);
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'Redirected' } });
    await deliver();
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    expect(json(await t.as(m.admin, { method: 'GET', url: `/api/v1/webhooks/${hook.id}/deliveries/` })).results[0]).toMatchObject({ status_code: 302 });
    await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${hook.id}/` });
  });

  it('claims from the head of each webhook queue it has room for, oldest first, under a lease, and no further', async () => {
    const [a, b] = [json(await register({ url: `${base}/claim-a`, events: ['ioc.created'] })), json(await register({ url: `${base}/claim-b`, events: ['ioc.created'] }))];
    const repo = new WebhooksRepository(t.app.deps.database.dialect);
    const at = (s: number) => new Date(t.clock.now().getTime() - 1000 * s).toISOString();
    const message = (webhookId: string, n: number, secondsAgo: number, status = 'pending') => ({
      id: t.app.deps.newId(), webhook_id: webhookId, event_id: t.app.deps.newId(), event_type: 'ioc.created', body: `{"n":${n}}`, status, next_attempt_at: at(secondsAgo), lease_until: null, created_at: at(secondsAgo), finished_at: null,
    });
    // A backlog of 40 on a, oldest first by number; b has 2, one of them not due yet; a delivered one is never taken.
    const rows = [...Array.from({ length: 40 }, (_, i) => message(a.id, i, 100 - i)), message(b.id, 100, 5), message(b.id, 101, -60), message(b.id, 102, 200, 'delivered')];
    await t.db.insertInto('webhook_messages').values(rows).execute();
    const now = t.clock.now().toISOString();
    const lease = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const first = await repo.claim(t.db, now, lease, [{ webhookId: a.id, room: 3 }, { webhookId: b.id, room: 16 }]);
    expect(first.map((r) => r.body).sort()).toEqual(['{"n":0}', '{"n":100}', '{"n":1}', '{"n":2}']);
    expect(first.every((r) => r.lease_until === lease)).toBe(true);
    // Leased rows are not taken again; the next claim goes on down a's queue.
    const second = await repo.claim(t.db, now, lease, [{ webhookId: a.id, room: 2 }, { webhookId: b.id, room: 16 }]);
    expect(second.map((r) => r.body).sort()).toEqual(['{"n":3}', '{"n":4}']);
    expect(await repo.claim(t.db, now, lease, [])).toEqual([]);
    await t.db.deleteFrom('webhook_messages').where('webhook_id', 'in', [a.id, b.id]).execute();
    for (const id of [a.id, b.id]) await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${id}/` });
  });

  it('delivers to others while one receiver hangs', async () => {
    const slow = json(await register({ url: `${base}/hang`, events: ['incident.created'] }));
    const fast = json(await register({ url: `${base}/fast`, events: ['incident.created'] }));
    receiver.answer = (r) => (r.path === '/hang' ? 'hang' : 200);
    await t.as(m.analyst, { method: 'POST', url: '/api/v1/incidents/', payload: { title: 'One hangs' } });
    const fastCount = () => receiver.received.filter((r) => r.path === '/fast').length;
    const before = fastCount();
    const running = deliver();
    // The fast receiver is answered while the hanging one still holds its request.
    while (fastCount() === before) await receiver.next(receiver.received.length + 1);
    const slowMsg = await t.db.selectFrom('webhook_messages').select('status').where('webhook_id', '=', slow.id).executeTakeFirstOrThrow();
    expect(slowMsg.status).toBe('pending');
    receiver.release();
    await running;
    expect((await t.db.selectFrom('webhook_messages').select('status').where('webhook_id', '=', fast.id).executeTakeFirstOrThrow()).status).toBe('delivered');
    for (const id of [slow.id, fast.id]) await t.as(m.admin, { method: 'DELETE', url: `/api/v1/webhooks/${id}/` });
  });
});

describe('webhook destinations (SSRF)', () => {
  let t: TestApp;
  let org: TestOrg;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg('enterprise', 'ssrf');
    receiver = new Receiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('refuses loopback, private, link-local, CGNAT, unique-local, multicast, unspecified and IPv4-mapped forms, and a name resolving to loopback', async () => {
    const urls = [
      'http://127.0.0.1/',
      'http://10.1.2.3/',
      'http://172.16.5.4/',
      'http://192.168.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://[::1]/',
      'http://[fc00::1]/',
      'http://[fe80::1]/',
      'http://224.0.0.1/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:10.0.0.1]/',
      // IPv6 forms that carry an IPv4 address: IPv4-compatible (stored as [::7f00:1]), NAT64, 6to4, Teredo.
      'http://[::127.0.0.1]/',
      'http://[::7f00:1]/',
      'http://[::10.0.0.1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:7f00:1::]/',
      'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
      'https://localhost/hook',
    ];
    for (const url of urls) {
      const res = await t.as(org.owner, { method: 'POST', url: '/api/v1/webhooks/', payload: { url, events: ['incident.created'] } });
      expect(res.statusCode, url).toBe(400);
      expect(json(res).errors[0].field).toBe('url');
    }
    expect(json(await t.as(org.owner, { method: 'GET', url: '/api/v1/webhooks/' })).count).toBe(0);
    // A public address is accepted (nothing is sent until an event comes).
    expect((await t.as(org.owner, { method: 'POST', url: '/api/v1/webhooks/', payload: { url: 'https://203.0.114.7/hook', events: ['incident.created'] } })).statusCode).toBe(201);
  });

  it('checks again at delivery, on the address it connects to: a name resolving to loopback reaches nothing', async () => {
    const base = await receiver.start();
    const port = new URL(base).port;
    for (const url of [`http://127.0.0.1:${port}/direct`, `http://localhost:${port}/by-name`, `http://[::ffff:127.0.0.1]:${port}/mapped`, `http://[::127.0.0.1]:${port}/compatible`]) {
      const r = await send(url, {}, '{}', false);
      expect(r, url).toMatchObject({ ok: false, status_code: null, error: expect.stringContaining('refused') });
    }
    expect(receiver.received).toEqual([]);
    expect(await send(`http://localhost:${port}/allowed`, {}, '{}', true)).toMatchObject({ ok: true, status_code: 200 });
  });
});
