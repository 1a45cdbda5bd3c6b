import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PULL_LIMITS } from '../../src/modules/feeds/feeds.pull.js';
import { buildTestApp, json, type TestApp, type TestTeam } from '../helpers/build-app.js';
import { stixIndicator } from '../helpers/stix.js';

const RED = 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1';
const indicator = stixIndicator;
const bundle = (objects: unknown[]) => JSON.stringify({ type: 'bundle', id: 'bundle--00000000-0000-4000-8000-000000000000', objects });

/** A feed server: answers each path what `pages` holds (status and body), and keeps the headers it got. */
class FeedServer {
  pages = new Map<string, { status: number; body: string }>();
  seen: http.IncomingHttpHeaders[] = [];
  private server = http.createServer((req, res) => {
    this.seen.push(req.headers);
    const page = this.pages.get(req.url ?? '') ?? { status: 404, body: 'no' };
    res.writeHead(page.status, { 'content-type': 'application/json' }).end(page.body);
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  close() {
    return new Promise((r) => this.server.close(r));
  }
}

describe('feeds and their indicators', () => {
  let t: TestApp;
  let team: TestTeam;
  const server = new FeedServer();
  const as = (role: keyof TestTeam['tokens'], method: string, url: string, payload?: unknown) =>
    t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${team.tokens[role]}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const indicators = async (query = '') => json(await as('analyst', 'GET', `/api/v1/indicators/?ordering=value&page_size=500${query}`)).results as Array<Record<string, any>>;
  const feed = async (id: string) => json(await as('analyst', 'GET', `/api/v1/feeds/${id}/`));

  beforeAll(async () => {
    await server.start();
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    team = await t.createTeam('enterprise', 'feeds');
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('is managed by admins and read by analysts; credentials whole once, masked after (audit log too); csv options only for csv', async () => {
    const created = await as('admin', 'POST', '/api/v1/feeds/', { name: 'Partner bundle', kind: 'stix', url: `${server.url}/crud.json`, auth: { type: 'bearer', token: 'very-secret-token' }, is_active: false });
    expect(created.statusCode).toBe(201);
    expect(json(created)).toMatchObject({ kind: 'stix', auth: { type: 'bearer', token: 'very-secret-token' }, status: 'never_pulled', interval_seconds: 3600, is_active: false });
    const id = json(created).id;
    expect((await feed(id)).auth).toEqual({ type: 'bearer', token: '****' });
    expect((await as('analyst', 'POST', '/api/v1/feeds/', { name: 'x', kind: 'stix', url: `${server.url}/x` })).statusCode).toBe(403);
    expect((await as('viewer', 'GET', '/api/v1/feeds/')).statusCode).toBe(403);
    const other = await t.createTeam('enterprise', 'feeds-other');
    expect((await t.inject({ method: 'GET', url: `/api/v1/feeds/${id}/`, headers: { authorization: `Bearer ${other.tokens.owner}` } })).statusCode).toBe(404);
    const audit = json(await as('admin', 'GET', '/api/v1/audit-log/?action=feed.created'));
    expect(JSON.stringify(audit)).not.toContain('very-secret-token');
    expect(audit.results[0].changes.auth).toEqual({ type: 'bearer', token: '****' });
    const wrong = await as('admin', 'POST', '/api/v1/feeds/', { name: 'x', kind: 'stix', url: `${server.url}/x`, column: 2 });
    expect([wrong.statusCode, json(wrong).errors]).toEqual([400, [{ field: 'column', message: 'is for csv and misp feeds only' }]]);
    const patched = await as('admin', 'PATCH', `/api/v1/feeds/${id}/`, { name: 'Partner STIX', auth: { type: 'basic', username: 'me', password: 'pw-secret' } });
    expect(json(patched)).toMatchObject({ name: 'Partner STIX', auth: { type: 'basic', username: 'me', password: '****' } });
    expect(JSON.stringify(json(await as('admin', 'GET', '/api/v1/audit-log/?action=feed.updated')))).not.toContain('pw-secret');
    expect((await as('admin', 'DELETE', `/api/v1/feeds/${id}/`)).statusCode).toBe(204);
  });

  it('refuses a private destination unless allowed, as webhooks do', async () => {
    const strict = await buildTestApp();
    try {
      const owner = (await strict.createOrg()).owner;
      const res = await strict.as(owner, { method: 'POST', url: '/api/v1/feeds/', payload: { name: 'x', kind: 'stix', url: 'http://127.0.0.1:9/feed.json' } });
      expect([res.statusCode, json(res).errors[0].field]).toEqual([400, 'url']);
    } finally {
      await strict.close();
    }
  });

  it('pulls a STIX bundle: typed indicators, patterns kept whole, TLP, rejects with examples; its credentials sent', async () => {
    server.pages.set(
      '/bundle.json',
      {
        status: 200,
        body: bundle([
          { type: 'identity', spec_version: '2.1', id: 'identity--00000000-0000-4000-8000-0000000000aa', name: 'Partner' },
          indicator(1, "[ipv4-addr:value = '198.51.100.7']", { confidence: 80, labels: ['c2'], object_marking_refs: [RED] }),
          indicator(2, "[domain-name:value = 'Evil.Example']"),
          indicator(3, "[file:hashes.'SHA-256' = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855']", { valid_until: '2027-01-01T00:00:00Z' }),
          indicator(4, "[file:name = 'invoice.exe' AND file:size > 1000]"),
          indicator(5, "[ipv4-addr:value = '198.51.100.7'"),
          indicator(6, 'alert tcp any any -> any 80', { pattern_type: 'snort' }),
          indicator(7, "[ipv4-addr:value = '999.1.1.1']"),
        ]),
      },
    );
    const id = json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'Partner bundle', kind: 'stix', url: `${server.url}/bundle.json`, auth: { type: 'header', name: 'X-Partner-Key', value: 'k-123' } })).id;
    server.seen.length = 0;
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    expect(server.seen[0]?.['x-partner-key']).toBe('k-123');
    const got = await indicators(`&feed=${id}`);
    expect(got.map((i) => [i.type, i.value])).toEqual([
      ['ipv4', '198.51.100.7'],
      ['stix-pattern', "[file:name = 'invoice.exe' AND file:size > 1000]"],
      ['sha256', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['domain', 'evil.example'],
    ]);
    expect(got[0]).toMatchObject({ confidence: 80, labels: ['c2'], tlp: 'red', revoked: false, feeds: [{ id, name: 'Partner bundle' }] });
    expect(got[2]!.valid_until).toBe('2027-01-01T00:00:00.000Z');
    const health = await feed(id);
    expect(health).toMatchObject({ status: 'healthy', last_error: null, objects_read: 8, indicators_added: 4, rejected: 3 });
    expect(health.reject_examples).toHaveLength(3);
    expect(health.reject_examples[0]).toMatch(/^indicator--[0-9a-f-]+5: not a STIX pattern/);
    expect(health.reject_examples[2]).toMatch(/^indicator--[0-9a-f-]+7: ipv4 /);
  });

  it('takes a newer version, retires a revoked one, leaves an unchanged one, and counts each', async () => {
    const id = json(await as('admin', 'GET', '/api/v1/feeds/?search=Partner bundle')).results[0].id;
    server.pages.set('/bundle.json', {
      status: 200,
      body: bundle([
        indicator(1, "[ipv4-addr:value = '198.51.100.7']", { modified: '2026-11-20T00:00:00.000Z', confidence: 95 }),
        indicator(2, "[domain-name:value = 'evil.example']", { modified: '2026-11-20T00:00:00.000Z', revoked: true }),
        indicator(3, "[file:hashes.'SHA-256' = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855']"),
      ]),
    });
    await as('admin', 'POST', `/api/v1/feeds/${id}/sync/`);
    t.clock.advance(60);
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    const got = new Map((await indicators(`&feed=${id}`)).map((i) => [i.value, i]));
    expect(got.get('198.51.100.7')).toMatchObject({ confidence: 95, revoked: false });
    expect(got.get('evil.example')).toMatchObject({ revoked: true });
    expect(json(await as('analyst', 'GET', '/api/v1/indicators/?revoked=true')).count).toBe(1);
    expect(await feed(id)).toMatchObject({ indicators_added: 4, indicators_updated: 1, indicators_retired: 1 });
  });

  it("shows in an incident what its feeds say of each IOC, and their later word at the next read", async () => {
    const incident = json(await as('analyst', 'POST', '/api/v1/incidents/', { title: 'Beaconing', iocs: [{ type: 'ipv4', value: '198.51.100.7' }, { type: 'domain', value: 'evil.example' }, { type: 'ipv4', value: '192.0.2.200' }] })).id;
    const read = async () => new Map((json(await as('viewer', 'GET', `/api/v1/incidents/${incident}/iocs/`)).results as Array<{ value: string; feed_matches: unknown[] }>).map((i) => [i.value, i.feed_matches]));
    const matches = await read();
    expect(matches.get('198.51.100.7')).toEqual([{ indicator: expect.any(String), feeds: [{ id: expect.any(String), name: 'Partner bundle' }], confidence: 95, tlp: 'red', revoked: false, false_positive: false }]);
    expect(matches.get('evil.example')).toMatchObject([{ revoked: true }]);
    expect(matches.get('192.0.2.200')).toEqual([]);
    const one = json(await as('viewer', 'GET', `/api/v1/incidents/${incident}/iocs/?type=ipv4&search=198.51`)).results[0];
    expect(json(await as('viewer', 'GET', `/api/v1/incidents/${incident}/iocs/${one.id}/`)).feed_matches).toHaveLength(1);
    // Another organization's indicators say nothing of ours.
    const other = await t.createTeam('enterprise', 'feeds-intel-other');
    const theirs = json(await t.inject({ method: 'POST', url: '/api/v1/incidents/', headers: { authorization: `Bearer ${other.tokens.analyst}` }, payload: { title: 'x', iocs: [{ type: 'ipv4', value: '198.51.100.7' }] } })).id;
    expect(json(await t.inject({ method: 'GET', url: `/api/v1/incidents/${theirs}/iocs/`, headers: { authorization: `Bearer ${other.tokens.analyst}` } })).results[0].feed_matches).toEqual([]);
  });

  it('says why a pull failed, applies nothing of it, and backs off', async () => {
    const id = json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'Flaky', kind: 'stix', url: `${server.url}/flaky.json`, interval_seconds: 3600 })).id;
    const before = (await indicators()).length;
    for (const [page, error] of [
      [{ status: 500, body: 'oops' }, 'the feed answered HTTP 500'],
      [{ status: 200, body: '{"type": "bundle", "obj' }, 'the answer is not JSON'],
      [{ status: 200, body: '{"type": "report"}' }, 'the answer is not a STIX bundle (type "bundle" with objects)'],
    ] as const) {
      server.pages.set('/flaky.json', page);
      await as('admin', 'POST', `/api/v1/feeds/${id}/sync/`);
      expect(await t.services.feeds.puller.pullDue()).toBe(1);
      expect(await feed(id)).toMatchObject({ status: 'failing', last_error: error });
    }
    // Three failures in a row: the next pull in 4 minutes.
    const failing = await feed(id);
    expect(Date.parse(failing.next_pull_at) - Date.parse(failing.last_pull_at)).toBe(240_000);
    // Over the object limit: nothing of the bundle is applied.
    const limit = PULL_LIMITS.maxObjects;
    PULL_LIMITS.maxObjects = 2;
    try {
      server.pages.set('/flaky.json', { status: 200, body: bundle([indicator(1, "[ipv4-addr:value = '203.0.113.1']"), indicator(2, "[ipv4-addr:value = '203.0.113.2']"), indicator(3, "[ipv4-addr:value = '203.0.113.3']")]) });
      await as('admin', 'POST', `/api/v1/feeds/${id}/sync/`);
      await t.services.feeds.puller.pullDue();
      expect((await feed(id)).last_error).toBe('the bundle holds 3 objects, more than the 2 a pull reads');
      expect(await indicators()).toHaveLength(before);
    } finally {
      PULL_LIMITS.maxObjects = limit;
    }
    await as('admin', 'POST', `/api/v1/feeds/${id}/sync/`);
    await t.services.feeds.puller.pullDue();
    expect(await feed(id)).toMatchObject({ status: 'healthy', last_error: null, indicators_added: 3 });
  });

  it('pulls indicator lists: one value per line (types told from their shapes), or a CSV column', async () => {
    server.pages.set('/urlhaus.txt', { status: 200, body: '# URLhaus online URLs\n#\nhttp://malware.example/a.exe\nhxxp://bad[.]example/b\n\n203.0.113.50\n2001:db8::66\n203.0.113.0/24\nd41d8cd98f00b204e9800998ecf8427e\nnot a thing at all\n' });
    const list = json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'URLhaus', kind: 'csv', url: `${server.url}/urlhaus.txt` })).id;
    server.pages.set('/feodo.csv', { status: 200, body: '# Feodo Tracker\nfirst_seen,dst_ip,dst_port,malware\n2026-11-01,198.51.100.99,443,Emotet\n2026-11-02,not-an-ip,443,QakBot\n' });
    const csv = json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'Feodo', kind: 'csv', url: `${server.url}/feodo.csv`, column: 'dst_ip', type: 'ipv4' })).id;
    expect(await t.services.feeds.puller.pullDue()).toBe(2);
    expect((await indicators(`&feed=${list}`)).map((i) => [i.type, i.value])).toEqual([
      ['ipv6', '2001:db8::66'],
      ['cidr', '203.0.113.0/24'],
      ['ipv4', '203.0.113.50'],
      ['md5', 'd41d8cd98f00b204e9800998ecf8427e'],
      ['url', 'http://bad.example/b'],
      ['url', 'http://malware.example/a.exe'],
    ]);
    expect(await feed(list)).toMatchObject({ objects_read: 7, indicators_added: 6, rejected: 1 });
    expect((await indicators(`&feed=${csv}`)).map((i) => i.value)).toEqual(['198.51.100.99']);
    expect((await feed(csv)).reject_examples).toEqual(['entry 2: ipv4 must be an IPv4 address such as 192.0.2.1']);
    // The same list again: nothing new, nothing changed, each seen again.
    await as('admin', 'POST', `/api/v1/feeds/${list}/sync/`);
    await t.services.feeds.puller.pullDue();
    expect(await feed(list)).toMatchObject({ indicators_added: 6, indicators_updated: 0 });
  });

  it('is pulled by one process at a time: a feed claimed is not claimed again', async () => {
    server.pages.set('/once.txt', { status: 200, body: '192.0.2.10\n' });
    json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'Once', kind: 'csv', url: `${server.url}/once.txt` }));
    const pulls = await Promise.all([t.services.feeds.puller.pullDue(), t.services.feeds.puller.pullDue()]);
    expect(pulls.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('lets analysts flag an indicator false positive with a note, nothing else', async () => {
    const [first] = await indicators('&type=md5');
    const res = await as('analyst', 'PATCH', `/api/v1/indicators/${first!.id}/`, { false_positive: true, note: 'the empty file' });
    expect(json(res)).toMatchObject({ false_positive: true, note: 'the empty file', value: first!.value });
    // What the feed said is read-only (ignored, as every read-only field is); an unknown field is refused.
    expect(json(await as('analyst', 'PATCH', `/api/v1/indicators/${first!.id}/`, { value: 'x' })).value).toBe(first!.value);
    expect((await as('analyst', 'PATCH', `/api/v1/indicators/${first!.id}/`, { bogus: 1 })).statusCode).toBe(400);
    expect((await as('viewer', 'PATCH', `/api/v1/indicators/${first!.id}/`, { note: 'x' })).statusCode).toBe(403);
    expect(json(await as('analyst', 'GET', '/api/v1/indicators/?false_positive=true')).results.map((i: { id: string }) => i.id)).toEqual([first!.id]);
  });
});
