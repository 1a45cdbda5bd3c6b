import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noticeOf } from '../../src/domain/notices.js';
import { filterOf } from '../../src/modules/notifications/notifications.queue.js';
import { buildTestApp, json, type TestApp, type TestTeam } from '../helpers/build-app.js';
import { stixIndicator } from '../helpers/stix.js';

const RED = 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1';
const AMBER = 'marking-definition--f88d31f6-486f-44da-b317-01333bde0b82';
let n = 0;
const indicator = (pattern: string, extra: Record<string, unknown> = {}) => stixIndicator(++n, pattern, extra);

describe('indicators put to work: tracking-token hits, leak records, indicator.matched', () => {
  let t: TestApp;
  let team: TestTeam;
  let other: TestTeam;
  let feedId: string;
  let body = '';
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  const as = (who: TestTeam, method: string, url: string, payload?: unknown) =>
    t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${who.tokens.admin}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const hit = (path: string, ip: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url: path, remoteAddress: ip, headers });
  const events = async (type: string) =>
    (await t.db.selectFrom('events').selectAll().where('type', '=', type).where('organization_id', '=', team.org.id).orderBy('created_at').execute()).map((e) => JSON.parse(e.data));

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    team = await t.createTeam('enterprise', 'intel');
    other = await t.createTeam('enterprise', 'intel-other');
    body = JSON.stringify({
      type: 'bundle',
      id: 'bundle--00000000-0000-4000-8000-000000000001',
      objects: [
        indicator("[ipv4-addr:value = '203.0.113.9']", { confidence: 90, object_marking_refs: [AMBER] }),
        indicator("[ipv4-addr:value = '198.51.100.0/24']", { confidence: 60 }),
        indicator("[domain-name:value = 'evil.example']", { confidence: 70 }),
        indicator("[url:value = 'http://phish.example/login']"),
        indicator("[network-traffic:extensions.'http-request-ext'.request_header.'User-Agent' = 'EvilBot/1.0']"),
        indicator("[ipv4-addr:value = '192.0.2.66']", { object_marking_refs: [RED] }),
        indicator("[ipv4-addr:value = '192.0.2.77']", { revoked: true }),
        indicator("[ipv4-addr:value = '192.0.2.88']", { valid_until: '2026-01-01T00:00:00Z' }),
        indicator("[ipv4-addr:value = '192.0.2.99']"),
      ],
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bundle.json`;
    feedId = json(await as(team, 'POST', '/api/v1/feeds/', { name: 'Partner intel', kind: 'stix', url })).id;
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    // An analyst's word: this one is a false positive.
    const fp = json(await as(team, 'GET', '/api/v1/indicators/?search=192.0.2.99')).results[0];
    await as(team, 'PATCH', `/api/v1/indicators/${fp.id}/`, { false_positive: true });
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });

  it('reduces a User-Agent pattern to a user-agent indicator', async () => {
    const got = json(await as(team, 'GET', '/api/v1/indicators/?type=user-agent')).results;
    expect(got.map((i: { value: string }) => i.value)).toEqual(['EvilBot/1.0']);
  });

  it('marks a token hit from what an indicator names: the exposure carries the match, its severity one step up, and an indicator.matched event', async () => {
    const token = json(await as(team, 'POST', '/api/v1/tracking-tokens/', { name: 'Finance share', kind: 'web_bug' }));
    const path = new URL(token.trigger_url).pathname;
    await hit(path, '203.0.113.9');
    await hit(path, '198.51.100.20', { 'user-agent': 'EvilBot/1.0', referer: 'https://www.evil.example/landing' });
    await hit(path, '192.0.2.10', { referer: 'http://phish.example/login' });
    await hit(path, '192.0.2.1'); // nothing names it
    await hit(path, '192.0.2.77'); // revoked
    await hit(path, '192.0.2.88'); // no longer valid
    await hit(path, '192.0.2.99'); // a false positive
    await t.services.trackingTokens.settled();
    const timeline = json(await as(team, 'GET', `/api/v1/tracking-tokens/${token.id}/timeline/?ordering=occurred_at&page_size=50`)).results as Array<Record<string, any>>;
    const byIp = new Map(timeline.map((e) => [e.source_ip, e]));
    expect(byIp.get('203.0.113.9')).toMatchObject({ severity: 'critical', indicator_matches: [{ type: 'ipv4', value: '203.0.113.9', field: 'ip', confidence: 90, tlp: 'amber', feeds: [{ id: feedId, name: 'Partner intel' }] }] });
    const several = byIp.get('198.51.100.20')!;
    expect(several.severity).toBe('critical');
    expect(several.indicator_matches.map((m: any) => [m.field, m.type, m.value]).sort()).toEqual([
      ['host', 'domain', 'evil.example'],
      ['ip', 'cidr', '198.51.100.0/24'],
      ['user_agent', 'user-agent', 'EvilBot/1.0'],
    ]);
    expect(byIp.get('192.0.2.10')).toMatchObject({ severity: 'critical', indicator_matches: [{ field: 'url', type: 'url', value: 'http://phish.example/login' }] });
    for (const ip of ['192.0.2.1', '192.0.2.77', '192.0.2.88', '192.0.2.99']) expect(byIp.get(ip), ip).toMatchObject({ severity: 'high', indicator_matches: [] });
    const matched = (await events('indicator.matched')).filter((e) => e.tracking_token === token.id);
    expect(matched).toHaveLength(5);
    expect(matched.find((e) => e.match.value === '203.0.113.9')).toMatchObject({ seen_in: 'tracking_token', severity: 'critical', exposure: byIp.get('203.0.113.9')!.id, leak_record: null });
    // The exposure event carries the match too; a channel's notice says so without the value.
    const exposed = (await events('tracking_token.exposed')).find((e) => e.id === byIp.get('203.0.113.9')!.id);
    expect(exposed).toMatchObject({ severity: 'critical', indicator_matches: [{ value: '203.0.113.9' }] });
    const notice = noticeOf('indicator.matched', matched[0]!, { personalData: false, base: 'https://tm.example' });
    expect(notice).toMatchObject({ severity: 'critical', link: `https://tm.example/tokens/${token.id}/` });
    expect(JSON.stringify(notice)).not.toContain(matched[0]!.match.value);
    expect(JSON.stringify(noticeOf('indicator.matched', matched[0]!, { personalData: true, base: '' }))).toContain(matched[0]!.match.value);
  });

  it('keeps a TLP:RED match in threatmon: on the timeline, never in an event', async () => {
    const token = json(await as(team, 'POST', '/api/v1/tracking-tokens/', { name: 'Red canary', kind: 'web_bug' }));
    await hit(new URL(token.trigger_url).pathname, '192.0.2.66');
    await t.services.trackingTokens.settled();
    const [exposure] = json(await as(team, 'GET', `/api/v1/tracking-tokens/${token.id}/timeline/`)).results;
    expect(exposure).toMatchObject({ severity: 'critical', indicator_matches: [{ value: '192.0.2.66', tlp: 'red' }] });
    const sent = (await events('tracking_token.exposed')).find((e) => e.id === exposure.id);
    expect(sent).toMatchObject({ severity: 'critical', indicator_matches: [] });
    expect((await events('indicator.matched')).some((e) => e.exposure === exposure.id)).toBe(false);
    expect(JSON.stringify(await events('indicator.matched'))).not.toContain('192.0.2.66');
  });

  it('never matches another organization\'s indicators', async () => {
    const token = json(await as(other, 'POST', '/api/v1/tracking-tokens/', { name: 'Theirs', kind: 'web_bug' }));
    await hit(new URL(token.trigger_url).pathname, '203.0.113.9', { 'user-agent': 'EvilBot/1.0' });
    await t.services.trackingTokens.settled();
    const [exposure] = json(await as(other, 'GET', `/api/v1/tracking-tokens/${token.id}/timeline/`)).results;
    expect(exposure).toMatchObject({ severity: 'high', indicator_matches: [] });
  });

  it('marks stealer-log records an indicator names, in search, the record, alerts and an indicator.matched event; not for other organizations', async () => {
    const staff = (await t.createOrg('enterprise', 'intel-platform', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Stealer logs 11-29', kind: 'stealer_log' } }));
    const monitor = json(await as(team, 'POST', '/api/v1/monitoring/', { name: 'Our people', type: 'domain', terms: ['intel-corp.example'], backfill: false }));
    const records = [
      { email: 'ann@intel-corp.example', password: 'hunter22', ip: '198.51.100.44', extra: { url: 'https://login.evil.example/wp-login.php' } },
      { email: 'bob@intel-corp.example', password: 'hunter23', ip: '192.0.2.1', extra: { url: 'https://intranet.intel-corp.example/' } },
    ];
    expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source.id}/records/`, payload: records })).accepted).toBe(2);
    const search = async (who: TestTeam) => {
      const res = await as(who, 'GET', '/api/v1/leaks/search/?domain=intel-corp.example');
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    const sorted = (json(await search(team)).results as Array<Record<string, any>>).sort((a, b) => a.email.localeCompare(b.email));
    const [ann, bob] = [sorted[0]!, sorted[1]!];
    expect(ann.indicator_matches.map((m: any) => [m.field, m.type, m.value]).sort()).toEqual([
      ['host', 'domain', 'evil.example'],
      ['ip', 'cidr', '198.51.100.0/24'],
    ]);
    expect(bob).not.toHaveProperty('indicator_matches');
    expect(json(await search(other)).results[0]).not.toHaveProperty('indicator_matches');
    expect(json(await as(team, 'GET', `/api/v1/leaks/records/${ann.id}/`)).indicator_matches).toHaveLength(2);
    expect(json(await as(other, 'GET', `/api/v1/leaks/records/${ann.id}/`))).not.toHaveProperty('indicator_matches');
    const alerts = json(await as(team, 'GET', `/api/v1/monitoring/${monitor.id}/alerts/?ordering=created_at`)).results as Array<Record<string, any>>;
    const annAlert = alerts.find((a) => a.leak_record.id === ann.id)!;
    expect(annAlert.leak_record.indicator_matches).toHaveLength(2);
    expect(alerts.find((a) => a.leak_record.id === bob.id)!.leak_record).not.toHaveProperty('indicator_matches');
    expect(json(await as(team, 'GET', `/api/v1/monitoring/alerts/${annAlert.id}/`)).leak_record.indicator_matches).toHaveLength(2);
    const matched = (await events('indicator.matched')).filter((e) => e.leak_record === ann.id);
    expect(matched.map((e) => e.match.type).sort()).toEqual(['cidr', 'domain']);
    expect(matched[0]).toMatchObject({ seen_in: 'leak_record', leak_source: { id: source.id, name: 'Stealer logs 11-29' }, tracking_token: null });
    expect((await t.db.selectFrom('events').select('id').where('type', '=', 'indicator.matched').where('organization_id', '=', other.org.id).execute()).length).toBe(0);
  });

  it('takes an analyst\'s later word on a CIDR indicator at the next hit (the ranges kept in memory are read again)', async () => {
    const token = json(await as(team, 'POST', '/api/v1/tracking-tokens/', { name: 'Range canary', kind: 'web_bug' }));
    const path = new URL(token.trigger_url).pathname;
    const timeline = async () => json(await as(team, 'GET', `/api/v1/tracking-tokens/${token.id}/timeline/?ordering=occurred_at`)).results as Array<Record<string, any>>;
    await hit(path, '198.51.100.21');
    await t.services.trackingTokens.settled();
    expect((await timeline())[0]!.indicator_matches.map((m: any) => m.value)).toEqual(['198.51.100.0/24']);
    const range = json(await as(team, 'GET', '/api/v1/indicators/?type=cidr')).results[0];
    await as(team, 'PATCH', `/api/v1/indicators/${range.id}/`, { false_positive: true });
    t.clock.advance(61);
    await hit(path, '198.51.100.22');
    await t.services.trackingTokens.settled();
    expect((await timeline())[1]).toMatchObject({ source_ip: '198.51.100.22', severity: 'high', indicator_matches: [] });
  });

  it('lets a channel filter matches as it filters alerts: by severity, and by token', () => {
    const takes = filterOf({ events: JSON.stringify(['tracking_token.exposed', 'indicator.matched']), min_severity: 'critical', monitors: '[]', tracking_tokens: JSON.stringify(['t1']) } as never);
    const event = (type: string, data: Record<string, unknown>) => ({ id: 'e', organization_id: 'o', created_at: '', type, data }) as never;
    const match = { indicator: 'i', type: 'ipv4', value: '203.0.113.9', field: 'ip', feeds: [], confidence: null, tlp: null };
    expect(takes(event('tracking_token.exposed', { token: 't1', severity: 'high', indicator_matches: [] }))).toBe(false);
    expect(takes(event('tracking_token.exposed', { token: 't1', severity: 'critical', indicator_matches: [match] }))).toBe(true);
    expect(takes(event('tracking_token.exposed', { token: 't2', severity: 'critical', indicator_matches: [match] }))).toBe(false);
    expect(takes(event('indicator.matched', { match, seen_in: 'tracking_token', tracking_token: 't1', severity: 'critical' }))).toBe(true);
    expect(takes(event('indicator.matched', { match, seen_in: 'tracking_token', tracking_token: 't2', severity: 'critical' }))).toBe(false);
    expect(takes(event('indicator.matched', { match, seen_in: 'leak_record', tracking_token: null, severity: 'high' }))).toBe(false);
    expect(takes(event('indicator.matched', { match, seen_in: 'leak_record', tracking_token: null, severity: 'critical' }))).toBe(true);
  });
});
