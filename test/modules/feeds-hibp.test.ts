import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp, type TestTeam } from '../helpers/build-app.js';

// An hibp feed of threatmon pulling another threatmon's Have I Been Pwned API (threatmon feeding threatmon).
describe('an hibp feed, pulling an upstream Have I Been Pwned v3 API', () => {
  let upstream: TestApp;
  let sink: TestApp;
  let owner: TestTeam;
  let team: TestTeam;
  let base: string;
  let key: string;

  const as = (who: TestTeam, method: string, url: string, payload?: unknown) => sink.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${who.tokens.admin}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const feed = async (id: string) => json(await as(team, 'GET', `/api/v1/feeds/${id}/`));

  beforeAll(async () => {
    upstream = await buildTestApp();
    base = await upstream.app.listen({ host: '127.0.0.1', port: 0 });
    sink = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    // Upstream: the domain's owner watches it (the upstream answers breacheddomain for watched domains only) and holds a key.
    owner = await upstream.createTeam('enterprise', 'hibp-owner');
    const staff = (await upstream.createOrg('enterprise', 'hibp-staff', true)).owner;
    const up = (method: string, url: string, payload: unknown, token = owner.tokens.admin) => upstream.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: payload as object });
    await up('POST', '/api/v1/monitoring/', { name: 'Ours', type: 'domain', terms: ['corp.example'], backfill: false });
    const staffToken = await upstream.token(staff);
    const adobe = json(await up('POST', '/api/v1/leaks/sources/', { name: 'Adobe', domain: 'adobe.com', breach_date: '2013-10-04', data_classes: ['email', 'password'], is_verified: true }, staffToken));
    const paste = json(await up('POST', '/api/v1/leaks/sources/', { name: 'Pastebin dump', kind: 'paste' }, staffToken));
    await up('POST', `/api/v1/leaks/sources/${adobe.id}/records/`, [{ email: 'alice@corp.example', password: 'x1y2z3w4' }, { email: 'bob@corp.example', password: 'p4ssw0rd!' }, { email: 'eve@elsewhere.example', password: 'q' }], staffToken);
    await up('POST', `/api/v1/leaks/sources/${paste.id}/records/`, [{ email: 'alice@corp.example' }], staffToken);
    key = json(await up('POST', '/api/v1/auth/api-keys/', { name: 'downstream threatmon' })).key;

    team = await sink.createTeam('enterprise', 'hibp-sink');
  });
  afterAll(async () => {
    await sink.close();
    await upstream.close();
  });

  it('says what it needs: a domain monitor of the organization\'s own, and a key the upstream takes', async () => {
    const id = json(await as(team, 'POST', '/api/v1/feeds/', { name: 'HIBP', kind: 'hibp', url: `${base}/hibp/api/v3`, auth: { type: 'header', name: 'hibp-api-key', value: 'wrong' } })).id;
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    expect((await feed(id)).last_error).toBe('the organization watches no domain: add a domain monitor for each of its own domains');
    await as(team, 'POST', '/api/v1/monitoring/', { name: 'Corp', type: 'domain', terms: ['corp.example'], backfill: false });
    await as(team, 'POST', `/api/v1/feeds/${id}/sync/`);
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    expect(await feed(id)).toMatchObject({ status: 'failing', last_error: 'breacheddomain/corp.example answered HTTP 401: the hibp-api-key is refused, or the domain is not verified for it', records_added: 0 });
    expect(JSON.stringify(await feed(id))).not.toContain('wrong');
    expect((await as(team, 'DELETE', `/api/v1/feeds/${id}/`)).statusCode).toBe(204);
  });

  it('adds the organization\'s breached accounts to the corpus, a source per breach, so its monitor fires; a second pull adds nothing twice', async () => {
    const id = json(await as(team, 'POST', '/api/v1/feeds/', { name: 'HIBP upstream', kind: 'hibp', url: `${base}/hibp/api/v3/`, auth: { type: 'header', name: 'hibp-api-key', value: key } })).id;
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    expect(await feed(id)).toMatchObject({ status: 'healthy', objects_read: 2, records_added: 3, rejected: 0, last_error: null });
    const search = json(await as(team, 'GET', '/api/v1/leaks/search/?domain=corp.example&page_size=50')).results as Array<Record<string, any>>;
    expect(search.map((r) => [r.email, r.source.name]).sort()).toEqual([
      ['alice@corp.example', 'Adobe (Have I Been Pwned)'],
      ['alice@corp.example', 'Pastebin dump (Have I Been Pwned)'],
      ['bob@corp.example', 'Adobe (Have I Been Pwned)'],
    ]);
    // Never another domain's accounts, never a password: the upstream names breaches, not what leaked.
    expect(search.every((r) => r.has_password === false)).toBe(true);
    const sources = json(await as(team, 'GET', '/api/v1/leaks/sources/?search=Have I Been Pwned')).results as Array<Record<string, any>>;
    expect(sources.find((s) => s.name === 'Adobe (Have I Been Pwned)')).toMatchObject({ domain: 'adobe.com', breach_date: '2013-10-04', is_verified: true, kind: 'breach', record_count: 2 });
    expect(sources.find((s) => s.name === 'Adobe (Have I Been Pwned)')!.data_classes.sort()).toEqual(['email', 'password']);
    const alerts = json(await as(team, 'GET', '/api/v1/monitoring/alerts/?page_size=50')).results as Array<Record<string, any>>;
    expect(alerts.map((a) => a.leak_record.email).sort()).toEqual(['alice@corp.example', 'alice@corp.example', 'bob@corp.example']);

    await as(team, 'POST', `/api/v1/feeds/${id}/sync/`);
    expect(await sink.services.feeds.puller.pullDue()).toBe(1);
    expect(await feed(id)).toMatchObject({ status: 'healthy', objects_read: 4, records_added: 3 });
    expect(json(await as(team, 'GET', '/api/v1/leaks/search/?domain=corp.example')).count).toBe(3);
  });
});
