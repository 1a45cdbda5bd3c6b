import { createHash } from 'node:crypto';
import * as hibp from 'hibp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ntlmHex } from '../../src/domain/ntlm.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();
const userAgent = 'threatmon-tests';

/**
 * The `hibp` npm package, unmodified, against a running threatmon: only its base URLs, an API key
 * and a user agent are given to it.
 */
describe('the Have I Been Pwned v3 API, as its own client speaks it', () => {
  let t: TestApp;
  let analyst: User;
  let key: string;
  let api: { baseUrl: string; apiKey: string; userAgent: string };
  let passwords: { baseUrl: string; userAgent: string };
  let base: string;

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_HIBP_PUBLIC_RANGE: 'true' });
    const staff = (await t.createOrg('enterprise', 'hibp-platform', true)).owner;
    const customer = await t.createTeam('professional', 'hibp-customer', 'hibp');
    analyst = customer.members.analyst;
    const source = async (body: object) => json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: body })).id as string;
    const ingest = async (id: string, records: object[]) => expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${id}/records/`, payload: records }))).toMatchObject({ rejected: [] });
    const alice = { email: 'alice@corp-hibp.example', password: 'Summer2026!' };
    await ingest(await source({ name: 'Adobe', domain: 'Adobe.example', breach_date: '2013-10-04', is_verified: true, data_classes: ['email', 'password', 'username'], description: 'Adobe lost it.' }), [alice, { email: 'bob@corp-hibp.example' }]);
    await ingest(await source({ name: 'Gawker', domain: 'gawker.example', data_classes: ['email'] }), [{ email: 'alice@corp-hibp.example' }]);
    await ingest(await source({ name: 'Secret club', is_sensitive: true, is_verified: true }), [{ email: 'alice@corp-hibp.example' }]);
    await ingest(await source({ name: 'Spam 2024', is_spam_list: true, is_verified: true }), [{ email: 'alice@corp-hibp.example' }]);
    const stealer = await source({ name: 'Stealer 2026', kind: 'stealer_log', is_verified: true });
    const lines = 'https://vpn.corp-hibp.example/login:alice@corp-hibp.example:pw-vpn\nhttps://social.example/:alice@corp-hibp.example:pw-social\n';
    expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${stealer}/records/`, headers: { 'content-type': 'text/plain' }, payload: lines })).accepted).toBe(2);
    await t.as(analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Ours', type: 'domain', terms: ['corp-hibp.example'], backfill: false } });
    key = json(await t.as(analyst, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'hibp client' } })).key;
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
    api = { baseUrl: `${base}/hibp/api/v3`, apiKey: key, userAgent };
    passwords = { baseUrl: `${base}/hibp/pwnedpasswords`, userAgent };
  });
  afterAll(() => t.close());

  it('breachedAccount: names by default, whole breaches, filters, never sensitive ones, null for none', async () => {
    expect(await hibp.breachedAccount('alice@corp-hibp.example', api)).toEqual([{ Name: 'Adobe' }, { Name: 'Gawker' }, { Name: 'Spam 2024' }, { Name: 'Stealer 2026' }]);
    expect(await hibp.breachedAccount('ALICE@corp-hibp.example', { ...api, includeUnverified: false })).toEqual([{ Name: 'Adobe' }, { Name: 'Spam 2024' }, { Name: 'Stealer 2026' }]);
    expect(await hibp.breachedAccount('alice@corp-hibp.example', { ...api, domain: 'adobe.example' })).toEqual([{ Name: 'Adobe' }]);
    const full = await hibp.breachedAccount('bob@corp-hibp.example', { ...api, truncate: false });
    expect(full).toEqual([
      {
        Name: 'Adobe',
        Title: 'Adobe',
        Domain: 'adobe.example',
        BreachDate: '2013-10-04',
        AddedDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        ModifiedDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        PwnCount: 2,
        Description: 'Adobe lost it.',
        LogoPath: '',
        DataClasses: ['Email addresses', 'Passwords', 'Usernames'],
        IsVerified: true,
        IsFabricated: false,
        IsSensitive: false,
        IsRetired: false,
        IsSpamList: false,
        IsMalware: false,
        IsStealerLog: false,
        IsSubscriptionFree: false,
      },
    ]);
    expect(await hibp.breachedAccount('nobody@corp-hibp.example', api)).toBeNull();
  });

  it('breaches, breach, latestBreach and dataClasses', async () => {
    const all = await hibp.breaches(api);
    expect(all.map((b) => b.Name)).toEqual(['Adobe', 'Gawker', 'Secret club', 'Spam 2024', 'Stealer 2026']);
    expect((await hibp.breaches({ ...api, domain: 'gawker.example' })).map((b) => b.Name)).toEqual(['Gawker']);
    expect(await hibp.breach('Adobe', api)).toMatchObject({ Name: 'Adobe', PwnCount: 2, IsVerified: true });
    expect(await hibp.breach('Nope', api)).toBeNull();
    expect(await hibp.latestBreach(api)).toMatchObject({ Name: 'Stealer 2026', IsStealerLog: true, IsMalware: true });
    expect(await hibp.dataClasses(api)).toEqual(expect.arrayContaining(['Email addresses', 'Passwords', 'IP addresses']));
    const spam = await t.inject({ method: 'GET', url: '/hibp/api/v3/breaches?isSpamList=true', headers: { 'user-agent': userAgent } });
    expect(json(spam).map((b: { Name: string }) => b.Name)).toEqual(['Spam 2024']);
  });

  it('breachedDomain, subscribedDomains and subscriptionStatus for the organization of the key', async () => {
    expect(await hibp.breachedDomain('corp-hibp.example', api)).toEqual({ alice: ['Adobe', 'Gawker', 'Secret club', 'Spam 2024', 'Stealer 2026'], bob: ['Adobe'] });
    await expect(hibp.breachedDomain('adobe.example', api)).rejects.toThrow('Forbidden');
    expect(await hibp.subscribedDomains(api)).toEqual([
      { DomainName: 'corp-hibp.example', PwnCount: 2, PwnCountExcludingSpamLists: 2, PwnCountExcludingSpamListsAtLastSubscriptionRenewal: 2, NextSubscriptionRenewal: '9999-12-31T00:00:00Z' },
    ]);
    expect(await hibp.subscriptionStatus(api)).toMatchObject({ SubscriptionName: 'Professional', Rpm: t.config.planLimits.professional, IncludesStealerLogs: true });
  });

  it('stealer logs by e-mail, website domain and e-mail domain', async () => {
    expect(await hibp.stealerLogsByEmail('alice@corp-hibp.example', api)).toEqual(['social.example', 'vpn.corp-hibp.example']);
    expect(await hibp.stealerLogsByWebsiteDomain('vpn.corp-hibp.example', api)).toEqual(['alice@corp-hibp.example']);
    expect(await hibp.stealerLogsByEmailDomain('corp-hibp.example', api)).toEqual({ alice: ['social.example', 'vpn.corp-hibp.example'] });
    await expect(hibp.stealerLogsByWebsiteDomain('social.example', api)).rejects.toThrow('Forbidden');
  });

  it('pwnedPassword and pwnedPasswordRange, padded, by SHA-1 and by NTLM', async () => {
    expect(await hibp.pwnedPassword('Summer2026!', passwords)).toBe(1);
    expect(await hibp.pwnedPassword('never leaked anywhere 42', passwords)).toBe(0);
    const range = await hibp.pwnedPasswordRange(sha1('Summer2026!').slice(0, 5), { ...passwords, addPadding: true });
    expect(range[sha1('Summer2026!').slice(5)]).toBe(1);
    expect(Object.keys(range).length).toBeGreaterThanOrEqual(800);
    const nt = ntlmHex('Summer2026!');
    const ntlm = await hibp.pwnedPasswordRange(nt.slice(0, 5), { ...passwords, addPadding: true, mode: 'ntlm' });
    expect(ntlm[nt.slice(5)]).toBe(1);
    await expect(hibp.pwnedPasswordRange('XYZ', passwords)).rejects.toThrow('The hash prefix was not in a valid format');
  });

  it('answers a missing or bad key with 401 and its message, a missing user agent with 403', async () => {
    await expect(hibp.breachedAccount('alice@corp-hibp.example', { ...api, apiKey: undefined })).rejects.toThrow('Access denied due to missing hibp-api-key.');
    await expect(hibp.breachedAccount('alice@corp-hibp.example', { ...api, apiKey: `tm_${'x'.repeat(43)}` })).rejects.toThrow('Access denied due to invalid hibp-api-key.');
    await expect(hibp.breachedAccount('alice@corp-hibp.example', { ...api, apiKey: 'not-a-key' })).rejects.toThrow('Access denied due to improperly formed hibp-api-key.');
    const noAgent = await fetch(`${base}/hibp/api/v3/breachedaccount/alice@corp-hibp.example`, { headers: { 'hibp-api-key': key, 'user-agent': '' } });
    expect(noAgent.status).toBe(403);
    // A NUL (which PostgreSQL refuses in text) names nothing: no account (400), no breach (404).
    expect((await t.inject({ method: 'GET', url: '/hibp/api/v3/breachedaccount/a%00b', headers: { 'hibp-api-key': key, 'user-agent': userAgent } })).statusCode).toBe(400);
    expect((await t.inject({ method: 'GET', url: '/hibp/api/v3/breach/%00', headers: { 'user-agent': userAgent } })).statusCode).toBe(404);
    // Exactly at Have I Been Pwned's paths: no trailing slash, no redirect.
    expect((await fetch(`${base}/hibp/api/v3/breaches/`, { redirect: 'manual', headers: { 'user-agent': userAgent } })).status).toBe(404);
  });
});

describe('the Have I Been Pwned surface without a public range, and its rate limit', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_PLAN_LIMITS: 'starter=4' });
    const org = await t.createOrg('starter', 'hibp-limited');
    key = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'limited' } })).key;
  });
  afterAll(() => t.close());

  it('answers the range with a key only, and 429 with retry-after past the plan limit', async () => {
    const range = (headers: Record<string, string>) => t.inject({ method: 'GET', url: '/hibp/pwnedpasswords/range/ABCDE', headers });
    const anonymous = await range({});
    expect(anonymous.statusCode).toBe(401);
    expect(json(anonymous)).toEqual({ statusCode: 401, message: 'Access denied due to missing hibp-api-key.' });
    expect((await range({ 'hibp-api-key': key })).statusCode).toBe(200);
    expect((await t.inject({ method: 'GET', url: '/hibp/api/v3/subscription/status', headers: { 'hibp-api-key': key, 'user-agent': userAgent } })).statusCode).toBe(200);
    expect((await range({ 'hibp-api-key': key })).statusCode).toBe(200);
    const limited = await range({ 'hibp-api-key': key });
    expect(limited.statusCode).toBe(429);
    const seconds = Number(limited.headers['retry-after']);
    expect(seconds).toBeGreaterThan(0);
    expect(json(limited)).toEqual({ statusCode: 429, message: `Rate limit is exceeded. Try again in ${seconds} seconds.` });
  });
});
