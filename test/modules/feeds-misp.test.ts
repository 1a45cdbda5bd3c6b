import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp, type TestTeam } from '../helpers/build-app.js';

const E1 = '5c1f6a8e-0000-4000-8000-000000000001';
const E2 = '5c1f6a8e-0000-4000-8000-000000000002';
const E3 = '5c1f6a8e-0000-4000-8000-000000000003';
const attr = (type: string, value: string, extra: Record<string, unknown> = {}) => ({ type, value, category: 'Network activity', to_ids: true, timestamp: '1764000000', uuid: '00000000-0000-4000-8000-0000000000ff', ...extra });
const event = (uuid: string, info: string, attributes: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ Event: { uuid, info, timestamp: '1764000000', Attribute: attributes, Object: [], ...extra } });

describe('MISP feeds: a feed directory by its manifest, and the CSV and freetext formats', () => {
  let t: TestApp;
  let team: TestTeam;
  const files = new Map<string, { status: number; body: string }>();
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    const f = files.get(req.url ?? '') ?? { status: 404, body: 'no' };
    res.writeHead(f.status, { 'content-type': 'application/json' }).end(f.body);
  });
  let base = '';
  const as = (method: string, url: string, payload?: unknown) => t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${team.tokens.admin}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const indicators = async (feed: string) => (json(await as('GET', `/api/v1/indicators/?feed=${feed}&ordering=value&page_size=500`)).results as Array<Record<string, any>>).map((i) => [i.type, i.value, i.tlp, i.revoked]);
  const pull = async (id: string) => {
    await as('POST', `/api/v1/feeds/${id}/sync/`);
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    return json(await as('GET', `/api/v1/feeds/${id}/`));
  };

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    team = await t.createTeam('enterprise', 'misp');
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });

  it('pulls the events of a MISP feed directory: to_ids attributes as indicators, pairs split, TLP tags, rejects; then only the events whose timestamp moved', async () => {
    files.set('/misp/manifest.json', { status: 200, body: JSON.stringify({ [E1]: { info: 'Phishing wave', timestamp: '1764000000' }, [E2]: { info: 'Botnet C2', timestamp: '1764000100' } }) });
    files.set(
      `/misp/${E1}.json`,
      {
        status: 200,
        body: event(E1, 'Phishing wave', [
          attr('url', 'hxxp://login-paypa1[.]example/verify'),
          attr('domain|ip', 'mail.login-paypa1.example|203.0.113.50'),
          attr('comment', 'seen in a campaign'),
          attr('ip-dst', '198.51.100.99', { to_ids: false }),
          attr('ip-dst', 'not-an-address'),
        ], { Tag: [{ name: 'tlp:amber' }, { name: 'misp-galaxy:threat-actor="APT-X"' }] }),
      },
    );
    files.set(
      `/misp/${E2}.json`,
      {
        status: 200,
        body: event(E2, 'Botnet C2', [attr('ip-dst|port', '2001:db8::66|443')], { Object: [{ name: 'file', Attribute: [attr('filename|sha256', `dropper.exe|${'AB'.repeat(32)}`, { Tag: [{ name: 'tlp:red' }] })] }] }),
      },
    );
    const feed = json(await as('POST', '/api/v1/feeds/', { name: 'CIRCL-style', kind: 'misp', url: `${base}/misp/` }));
    expect(feed.format).toBe('misp');
    asked.length = 0;
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    let state = json(await as('GET', `/api/v1/feeds/${feed.id}/`));
    expect(state).toMatchObject({ status: 'healthy', objects_read: 7, indicators_added: 5, rejected: 1 });
    expect(state.reject_examples[0]).toContain('not-an-address');
    expect(await indicators(feed.id)).toEqual([
      ['ipv6', '2001:db8::66', null, false],
      ['domain', 'mail.login-paypa1.example', 'amber', false],
      ['sha256', 'ab'.repeat(32), 'red', false],
      ['ipv4', '203.0.113.50', 'amber', false],
      ['url', 'http://login-paypa1.example/verify', 'amber', false],
    ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))));
    const one = json(await as('GET', `/api/v1/indicators/?feed=${feed.id}&type=url`)).results[0];
    expect(one).toMatchObject({ name: 'Phishing wave', labels: ['misp-galaxy:threat-actor="APT-X"'] });

    // Nothing moved: only the manifest is read.
    asked.length = 0;
    state = await pull(feed.id);
    expect(asked).toEqual(['/misp/manifest.json']);
    expect(state.objects_read).toBe(7);

    // Event 2 changed (an attribute deleted), event 3 is new but broken: event 2 is applied, 3 waits.
    files.set('/misp/manifest.json', { status: 200, body: JSON.stringify({ [E1]: { timestamp: '1764000000' }, [E2]: { timestamp: '1764000500' }, [E3]: { timestamp: '1764000600' } }) });
    files.set(`/misp/${E2}.json`, { status: 200, body: event(E2, 'Botnet C2', [attr('ip-dst|port', '2001:db8::66|443', { deleted: true, timestamp: '1764000500' })]) });
    files.set(`/misp/${E3}.json`, { status: 200, body: '{"Event": ' });
    asked.length = 0;
    state = await pull(feed.id);
    expect(asked).toEqual(['/misp/manifest.json', `/misp/${E2}.json`, `/misp/${E3}.json`]);
    expect(state).toMatchObject({ status: 'failing', indicators_retired: 1 });
    expect(state.last_error).toContain(`${E3}.json is not JSON`);
    expect((await indicators(feed.id)).find((i) => i[1] === '2001:db8::66')).toEqual(['ipv6', '2001:db8::66', null, true]);
    // Mended: only event 3 is read.
    files.set(`/misp/${E3}.json`, { status: 200, body: event(E3, 'New', [attr('md5', 'D41D8CD98F00B204E9800998ECF8427E')]) });
    asked.length = 0;
    state = await pull(feed.id);
    expect(asked).toEqual(['/misp/manifest.json', `/misp/${E3}.json`]);
    expect(state).toMatchObject({ status: 'healthy', last_error: null });
    expect((await indicators(feed.id)).some((i) => i[1] === 'd41d8cd98f00b204e9800998ecf8427e')).toBe(true);
  });

  it('says what is wrong with a manifest, applying nothing', async () => {
    files.set('/bad/manifest.json', { status: 200, body: '[1, 2]' });
    const feed = json(await as('POST', '/api/v1/feeds/', { name: 'Bad MISP', kind: 'misp', url: `${base}/bad/manifest.json` }));
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    expect(json(await as('GET', `/api/v1/feeds/${feed.id}/`))).toMatchObject({ status: 'failing', last_error: 'manifest.json is not a MISP feed manifest (an object of events by uuid)', indicators_added: 0 });
  });

  it('reads MISP\'s freetext format (indicators in prose, defanged or not) and its CSV format (with a column)', async () => {
    files.set('/freetext.txt', { status: 200, body: 'The actor used hxxps://cdn.bad-updates[.]example/a.js and 192.0.2.200, dropped 44d88612fea8a8f36de82e1278abb02f; contact abuse@registrar.example. Nothing else: version 1.2 of the tool.' });
    const free = json(await as('POST', '/api/v1/feeds/', { name: 'Freetext', kind: 'misp', format: 'freetext', url: `${base}/freetext.txt` }));
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    expect((await indicators(free.id)).map((i) => [i[0], i[1]])).toEqual([
      ['ipv4', '192.0.2.200'],
      ['md5', '44d88612fea8a8f36de82e1278abb02f'],
      ['email', 'abuse@registrar.example'],
      ['url', 'https://cdn.bad-updates.example/a.js'],
    ]);
    files.set('/misp.csv', { status: 200, body: 'uuid,event_id,category,type,value\n1,7,Network activity,ip-dst,198.51.100.31\n2,7,Network activity,domain,c2.example\n' });
    const csv = json(await as('POST', '/api/v1/feeds/', { name: 'MISP CSV', kind: 'misp', format: 'csv', column: 'value', url: `${base}/misp.csv` }));
    expect(await t.services.feeds.puller.pullDue()).toBe(1);
    expect((await indicators(csv.id)).map((i) => [i[0], i[1]])).toEqual([
      ['ipv4', '198.51.100.31'],
      ['domain', 'c2.example'],
    ]);
    const wrong = await as('POST', '/api/v1/feeds/', { name: 'x', kind: 'stix', format: 'csv', url: `${base}/x` });
    expect([wrong.statusCode, json(wrong).errors]).toEqual([400, [{ field: 'format', message: 'is for misp feeds only' }]]);
  });
});
