import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExposureSchema, TrackingTokenSchema } from '../../src/modules/tracking-tokens/tracking-tokens.schemas.js';
import { NO_TOKEN, TrackingTokensRepository } from '../../src/modules/tracking-tokens/tracking-tokens.repository.js';
import { presentExposure } from '../../src/modules/tracking-tokens/tracking-tokens.presenters.js';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('tracking tokens (API.md section 6)', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  const m = {} as Record<Role, User>;
  const create = (body: object, as: User = m.analyst) => t.as(as, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: body });
  const timeline = async (id: string, qs = '') => json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/tracking-tokens/${id}/timeline/${qs}` }));
  const read = async (id: string) => json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/tracking-tokens/${id}/` }));
  const hit = (path: string, options: { method?: 'GET' | 'HEAD'; ip?: string; headers?: Record<string, string> } = {}) =>
    t.inject({ method: options.method ?? 'GET', url: path, remoteAddress: options.ip ?? '198.51.100.9', headers: options.headers ?? {} });
  const settled = () => t.services.trackingTokens.settled();
  const pathOf = (url: string) => new URL(url).pathname;

  beforeAll(async () => {
    t = await buildTestApp();
    const team = await t.createTeam('enterprise', 'canaries', 'canary');
    org = team.org;
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'elsewhere');
  });
  afterAll(() => t.close());

  it('creates each kind with its material, shown on every read', async () => {
    const bug = await create({ name: 'Finance share', kind: 'web_bug', memo: 'in \\\\fs01\\finance\\salaries.docx' });
    expect(bug.statusCode).toBe(201);
    const b = json(bug);
    expect(b).toMatchObject({ kind: 'web_bug', status: 'active', exposure_count: 0, last_exposed_at: null, ignore_ips: [], created_by: m.analyst.id });
    expect(b.trigger_url).toMatch(/^http:\/\/localhost(:\d+)?\/t\/[A-Za-z0-9_-]{32}\/$/);
    expect(b).not.toHaveProperty('api_key');
    const redirect = json(await create({ name: 'Wiki link', kind: 'redirect', redirect_url: 'HTTPS://Example.COM/wiki' }));
    expect(redirect).toMatchObject({ redirect_url: 'https://example.com/wiki', trigger_url: expect.any(String) });
    const cred = json(await create({ name: 'Backup admin', kind: 'credential' }));
    expect(cred).toMatchObject({ username: expect.stringMatching(/^svc-backup-/), password: expect.any(String) });
    expect(cred).not.toHaveProperty('trigger_url');
    const key = json(await create({ name: 'CI key', kind: 'api_key' }));
    expect(key.api_key.split('.')).toHaveLength(3);
    expect(JSON.parse(Buffer.from(key.api_key.split('.')[0], 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(await read(key.id)).toEqual(key);
    // The material never reaches the audit log.
    const audit = JSON.stringify(json(await t.as(m.admin, { method: 'GET', url: '/api/v1/audit-log/?target_type=tracking_token&page_size=500' })).results);
    expect(audit).toContain('tracking_token.created');
    expect(audit).not.toContain(cred.password);
    expect(audit).not.toContain(key.api_key);
  });

  it('refuses bad input with 400 naming the field, and stores nothing', async () => {
    const before = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/tracking-tokens/' })).count;
    const cases: Array<[object, string]> = [
      [{ name: 'r', kind: 'redirect' }, 'redirect_url'],
      [{ name: 'r', kind: 'redirect', redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
      [{ name: 'r', kind: 'redirect', redirect_url: 'ftp://example.com/x' }, 'redirect_url'],
      [{ name: 'w', kind: 'web_bug', redirect_url: 'https://example.com/' }, 'redirect_url'],
      [{ name: 'w', kind: 'web_bug', username: 'someone' }, 'username'],
      [{ name: 'c', kind: 'credential', username: m.viewer.username.toUpperCase() }, 'username'],
      [{ name: 'w', kind: 'web_bug', ignore_ips: ['10.0.0.0/8', 'not-an-ip'] }, 'ignore_ips.1'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(res).errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await create({ name: 'x', kind: 'phone' })).statusCode).toBe(400);
    expect(json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/tracking-tokens/' })).count).toBe(before);
  });

  it('answers unknown, disabled, deleted and live web_bug keys with the same bytes, and records only the live one', async () => {
    const live = json(await create({ name: 'Live bug', kind: 'web_bug' }));
    const off = json(await create({ name: 'Off bug', kind: 'web_bug', status: 'disabled' }));
    const gone = json(await create({ name: 'Gone bug', kind: 'web_bug' }));
    expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/tracking-tokens/${gone.id}/` })).statusCode).toBe(204);
    const answers = [];
    for (const path of [pathOf(live.trigger_url), pathOf(off.trigger_url), pathOf(gone.trigger_url), '/t/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/', '/t/x/', '/t/%00/']) {
      const res = await hit(path);
      const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
      answers.push({ status: res.statusCode, headers, body: res.rawPayload.toString('base64') });
    }
    expect(answers[0]).toMatchObject({ status: 200, headers: { 'content-type': 'image/gif', 'cache-control': expect.stringContaining('no-store') } });
    for (const a of answers.slice(1)) expect(a).toEqual(answers[0]);
    await settled();
    expect((await timeline(live.id)).count).toBe(1);
    expect((await timeline(off.id)).count).toBe(0);
    const exposures = await t.db.selectFrom('tracking_token_exposures').select('token_id').execute();
    expect(exposures.filter((e) => [off.id, gone.id].includes(e.token_id))).toEqual([]);
  });

  it('looks up a live and an unknown key alike: one row of the same shape, the unknown one a disabled web_bug of no token', async () => {
    const repo = new TrackingTokensRepository(t.app.deps.database.dialect);
    const live = json(await create({ name: 'Looked-up bug', kind: 'web_bug' }));
    const found = await repo.byTriggerKey(t.db, pathOf(live.trigger_url).split('/')[2]!);
    const missed = await repo.byTriggerKey(t.db, 'B'.repeat(32));
    expect(found).toMatchObject({ id: live.id, kind: 'web_bug', status: 'active', ignore_ips: '[]' });
    expect(missed).toMatchObject({ ...NO_TOKEN });
    expect(Object.keys(missed)).toEqual(Object.keys(found));
    expect(Object.values(missed).map((v) => typeof v)).toEqual(Object.values(found).map((v) => typeof v));
    expect(await t.db.selectFrom('tracking_tokens').select('id').where('id', '=', NO_TOKEN.id).execute()).toEqual([]);
  });

  it('records GET and HEAD, any path below the key, with the client fields trimmed, and the figures', async () => {
    const bug = json(await create({ name: 'Detailed', kind: 'web_bug' }));
    const base = pathOf(bug.trigger_url);
    await hit(`${base}invoice.pdf?x=1`, { headers: { 'user-agent': `Mozilla/${'x'.repeat(3000)}`, referer: 'https://mail.example/inbox' } });
    expect((await hit(base, { method: 'HEAD', ip: '::ffff:203.0.113.5' })).statusCode).toBe(200);
    await settled();
    const page = await timeline(bug.id);
    expect(page.count).toBe(2);
    const [head, get] = page.results;
    expect(head).toMatchObject({ token: bug.id, channel: 'http', method: 'HEAD', source_ip: '203.0.113.5', path: base, leak_record: null, leak_source: null });
    expect(get).toMatchObject({ method: 'GET', source_ip: '198.51.100.9', path: `${base}invoice.pdf?x=1`, referer: 'https://mail.example/inbox' });
    expect(get.user_agent).toHaveLength(1024);
    expect(await read(bug.id)).toMatchObject({ exposure_count: 2, last_exposed_at: head.occurred_at });
    expect((await timeline(bug.id, '?channel=login')).count).toBe(0);
    expect((await t.as(m.viewer, { method: 'GET', url: `/api/v1/tracking-tokens/${bug.id}/timeline/?channel=bogus` })).statusCode).toBe(400);
    // Each exposure is an event of the organization.
    const events = await t.db.selectFrom('events').select(['organization_id', 'data']).where('type', '=', 'tracking_token.exposed').execute();
    expect(events.filter((e) => JSON.parse(e.data).token === bug.id).map((e) => e.organization_id)).toEqual([org.id, org.id]);
  });

  it('redirects, a disabled redirect too, recording only while active', async () => {
    const r = json(await create({ name: 'Redirect', kind: 'redirect', redirect_url: 'https://example.com/landing' }));
    const first = await hit(pathOf(r.trigger_url));
    expect(first.statusCode).toBe(302);
    expect(first.headers.location).toBe('https://example.com/landing');
    await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/tracking-tokens/${r.id}/`, payload: { status: 'disabled' } });
    const second = await hit(pathOf(r.trigger_url));
    expect(second.statusCode).toBe(302);
    await settled();
    expect((await timeline(r.id)).count).toBe(1);
  });

  it('ignores hits from ignore_ips, IPv4-mapped addresses included', async () => {
    const bug = json(await create({ name: 'Scanned', kind: 'web_bug', ignore_ips: ['10.1.0.0/16', '::ffff:192.0.2.7'] }));
    expect(bug.ignore_ips).toEqual(['10.1.0.0/16', '192.0.2.7']);
    for (const ip of ['10.1.200.3', '::ffff:10.1.0.9', '192.0.2.7', '::ffff:192.0.2.7', '10.2.0.1']) await hit(pathOf(bug.trigger_url), { ip });
    await settled();
    expect((await timeline(bug.id)).results.map((e: { source_ip: string }) => e.source_ip)).toEqual(['10.2.0.1']);
  });

  it('records at most 60 exposures of a token in any 60 s', async () => {
    const bug = json(await create({ name: 'Flooded', kind: 'web_bug' }));
    for (let i = 0; i < 75; i++) await hit(pathOf(bug.trigger_url));
    await settled();
    expect((await read(bug.id)).exposure_count).toBe(60);
    t.clock.advance(61);
    await hit(pathOf(bug.trigger_url));
    await settled();
    expect((await timeline(bug.id)).count).toBe(61);
  });

  it('records the hits that wait together in one transaction, each token to its cap, with an event each', async () => {
    const repo = new TrackingTokensRepository(t.app.deps.database.dialect);
    const [a, b] = [json(await create({ name: 'Burst A', kind: 'web_bug' })), json(await create({ name: 'Burst B', kind: 'web_bug' }))];
    const [ta, tb] = [await repo.byTriggerKey(t.db, pathOf(a.trigger_url).split('/')[2]!), await repo.byTriggerKey(t.db, pathOf(b.trigger_url).split('/')[2]!)];
    const svc = t.services.trackingTokens as unknown as { offer(hit: object): void };
    const transaction = vi.spyOn(t.db, 'transaction');
    try {
      // Offered in one turn of the event loop, as a burst of requests would be: one batch.
      for (let i = 0; i < 75; i++) svc.offer({ token: i < 70 ? ta : tb, channel: 'http', client: { ip: '198.51.100.20', method: 'GET', url: `/t/x/${i}`, headers: {} }, at: t.clock.now() });
      await settled();
      expect(transaction).toHaveBeenCalledTimes(1);
    } finally {
      transaction.mockRestore();
    }
    expect([(await read(a.id)).exposure_count, (await read(b.id)).exposure_count]).toEqual([60, 5]);
    const events = await t.db.selectFrom('events').select('data').where('type', '=', 'tracking_token.exposed').execute();
    const tokens = events.map((e) => (JSON.parse(e.data) as { token: string }).token);
    expect([tokens.filter((x) => x === a.id).length, tokens.filter((x) => x === b.id).length]).toEqual([60, 5]);
  });

  it('records a login with a credential token, answering exactly the ordinary 401', async () => {
    const cred = json(await create({ name: 'Planted login', kind: 'credential', username: 'Backup-Admin', password: 'Summer2026!planted' }));
    const login = (username: string, password: string) => t.inject({ method: 'POST', url: '/api/v1/auth/token/', payload: { username, password }, remoteAddress: '203.0.113.44', headers: { 'user-agent': 'curl/8' } });
    const planted = await login('backup-admin', cred.password);
    const nobody = await login('no-such-user-here', cred.password);
    expect(planted.statusCode).toBe(401);
    const { request_id: _a, ...plantedBody } = json(planted);
    const { request_id: _b, ...nobodyBody } = json(nobody);
    expect(plantedBody).toEqual(nobodyBody);
    await settled();
    const [e] = (await timeline(cred.id)).results;
    expect(e).toMatchObject({ channel: 'login', source_ip: '203.0.113.44', user_agent: 'curl/8', method: 'POST', path: '/api/v1/auth/token/' });
    expect(JSON.stringify(e)).not.toContain(cred.password);
  });

  it('records an API key presented as a Bearer token, answering the ordinary 401, and never looks up a valid token', async () => {
    const key = json(await create({ name: 'Planted key', kind: 'api_key' }));
    const presented = await t.inject({ method: 'GET', url: '/api/v1/incidents/', headers: { authorization: `Bearer ${key.api_key}` } });
    const forged = await t.inject({ method: 'GET', url: '/api/v1/incidents/', headers: { authorization: `Bearer ${key.api_key.slice(0, -4)}AAAA` } });
    expect(presented.statusCode).toBe(401);
    expect({ ...json(presented), request_id: null }).toEqual({ ...json(forged), request_id: null });
    await settled();
    expect((await timeline(key.id)).results).toEqual([expect.objectContaining({ channel: 'api_key', method: 'GET', path: '/api/v1/incidents/' })]);
    let lookups = 0;
    const repo = (t.services.trackingTokens as unknown as { repo: { byApiKey: (...a: unknown[]) => unknown } }).repo;
    const real = repo.byApiKey.bind(repo);
    repo.byApiKey = (...a: unknown[]) => {
      lookups++;
      return real(...a);
    };
    expect((await t.as(m.viewer, { method: 'GET', url: '/api/v1/incidents/' })).statusCode).toBe(200);
    expect(lookups).toBe(0);
    repo.byApiKey = real;
  });

  it('finds tokens in ingested leak data: username, password (by SHA-1), API key and trigger URL, once per record', async () => {
    const cred = json(await create({ name: 'Leakable login', kind: 'credential', username: 'leaky.admin', password: 'Planted-Passw0rd-42' }));
    const key = json(await create({ name: 'Leakable key', kind: 'api_key' }));
    const bug = json(await create({ name: 'Leakable bug', kind: 'web_bug' }));
    const staff = (await t.createOrg('enterprise', 'canary-platform', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Paste dump' } }));
    const records = [
      { username: 'LEAKY.ADMIN', email: 'a@paste.example' },
      { email: 'b@paste.example', password: 'Planted-Passw0rd-42' },
      { email: 'c@paste.example', extra: { config: `API_TOKEN=${key.api_key}` } },
      { email: 'd@paste.example', extra: { html: `<img src="${bug.trigger_url}">` } },
      { email: 'e@paste.example', extra: { note: 'nothing here' } },
    ];
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source.id}/records/`, payload: records });
    expect(json(res)).toMatchObject({ accepted: 5, exposures_found: 4 });
    const again = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source.id}/records/`, payload: records });
    expect(json(again)).toMatchObject({ accepted: 0, exposures_found: 0 });
    expect((await timeline(cred.id)).results.map((e: { channel: string; leak_source: unknown }) => [e.channel, e.leak_source])).toEqual([
      ['leak', { id: source.id, name: 'Paste dump' }],
      ['leak', { id: source.id, name: 'Paste dump' }],
    ]);
    const [k] = (await timeline(key.id)).results;
    expect(k).toMatchObject({ channel: 'leak', source_ip: null, method: null, leak_record: expect.any(String) });
    expect((await timeline(bug.id)).count).toBe(1);
    expect(await read(cred.id)).toMatchObject({ exposure_count: 2 });
  });

  it('lists each token exactly as its own GET shows it, and each exposure as stored, field by field and in order (the JSON is written by the database)', async () => {
    // Characters JSON must escape, and some it need not: quotes, backslash, controls, U+2028, astral, markup.
    const odd = 'a"b\\c\n\t\u0001\u001f\u2028é😀</script>';
    const made = [
      json(await create({ name: `Odd ${odd}`, memo: odd, kind: 'web_bug', ignore_ips: ['10.0.0.0/8', '::ffff:192.0.2.1'] })),
      json(await create({ name: 'Odd redirect', kind: 'redirect', redirect_url: `https://example.com/${encodeURIComponent(odd)}` })),
      json(await create({ name: 'Odd login', kind: 'credential', username: 'odd.login', password: `Pw ${odd}` })),
      json(await create({ name: 'Odd key', kind: 'api_key', status: 'disabled' })),
    ];
    // A last_exposed_at, a leak exposure with its source, and client fields to escape.
    await hit(`${pathOf(made[0].trigger_url)}${encodeURIComponent(odd)}?q="x"`, { headers: { 'user-agent': odd, referer: 'https://r.example/"' } });
    await settled();
    const staff = (await t.createOrg('enterprise', 'odd-platform', true)).owner;
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: `Dump ${odd}` } }));
    await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source.id}/records/`, payload: [{ email: 'odd@paste.example', username: 'odd.login' }] });
    for (const token of made) {
      const alone = await read(token.id);
      const page = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/tracking-tokens/?search=${encodeURIComponent(token.name)}&page_size=500` }));
      const listed = page.results.find((r: { id: string }) => r.id === token.id);
      expect(listed).toEqual(alone);
      expect(Object.keys(listed)).toEqual(Object.keys(alone));
      // The material of its kind, and nothing of the others'.
      expect(Object.keys(alone).sort()).toEqual(Object.keys(TrackingTokenSchema.properties).filter((k) => k in token).sort());
    }
    expect((await read(made[0].id)).last_exposed_at).not.toBeNull();
    const stored = await t.app.deps.database.db.selectFrom('tracking_token_exposures').selectAll().where('token_id', 'in', [made[0].id, made[2].id]).execute();
    expect(stored.map((r) => r.channel).sort()).toEqual(['http', 'leak']);
    for (const row of stored) {
      const [listed] = (await timeline(row.token_id)).results;
      // As the webhook event shows it: presentExposure, serialised.
      const expected = JSON.parse(JSON.stringify(presentExposure(row)));
      expect(listed).toEqual(expected);
      expect(Object.keys(listed)).toEqual(Object.keys(ExposureSchema.properties));
    }
  });

  it('lists with filters and search, checks roles, and answers 404 across organizations', async () => {
    const list = (qs: string, as: User = m.viewer) => t.as(as, { method: 'GET', url: `/api/v1/tracking-tokens/${qs}` });
    expect(json(await list('?kind=credential')).results.every((r: { kind: string }) => r.kind === 'credential')).toBe(true);
    expect(json(await list('?search=salaries')).results.map((r: { name: string }) => r.name)).toEqual(['Finance share']);
    expect(json(await list('?status=disabled')).count).toBeGreaterThanOrEqual(1);
    expect((await list('?kind=sms')).statusCode).toBe(400);
    const mine = json(await list('?kind=web_bug')).results[0];
    expect((await create({ name: 'viewer', kind: 'web_bug' }, m.viewer)).statusCode).toBe(403);
    expect((await t.as(m.analyst, { method: 'DELETE', url: `/api/v1/tracking-tokens/${mine.id}/` })).statusCode).toBe(403);
    expect((await t.as(m.viewer, { method: 'PATCH', url: `/api/v1/tracking-tokens/${mine.id}/`, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/tracking-tokens/${mine.id}/`, payload: { name: 'x' }, headers: { 'if-match': '"99"' } })).statusCode).toBe(412);
    for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['GET', 'timeline/']] as const) {
      const res = await t.as(other.owner, { method, url: `/api/v1/tracking-tokens/${mine.id}/${suffix}`, ...(method === 'PATCH' ? { payload: { name: 'theirs' } } : {}) });
      expect(res.statusCode, `${method} ${suffix}`).toBe(404);
    }
    expect(json(await list('', other.owner)).count).toBe(0);
    const usage = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/organization/usage/' }));
    expect(usage.tracking_tokens).toBe(json(await list('')).count);
  });
});

describe('tracking tokens behind a proxy', () => {
  it('takes the client address from X-Forwarded-For only with THREATMON_TRUST_PROXY', async () => {
    for (const trust of [false, true]) {
      const t = await buildTestApp(trust ? { THREATMON_TRUST_PROXY: 'true' } : {});
      try {
        const org = await t.createOrg('enterprise', `proxy-${trust}`);
        const bug = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'Proxied', kind: 'web_bug' } }));
        await t.inject({ method: 'GET', url: new URL(bug.trigger_url).pathname, remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': '203.0.113.99' } });
        await t.services.trackingTokens.settled();
        const [e] = json(await t.as(org.owner, { method: 'GET', url: `/api/v1/tracking-tokens/${bug.id}/timeline/` })).results;
        expect(e.source_ip).toBe(trust ? '203.0.113.99' : '10.0.0.2');
      } finally {
        await t.close();
      }
    }
  });
});
