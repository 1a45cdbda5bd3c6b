import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseRecord, recordSeverity } from '../../src/domain/leak-record.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

const severityOf = (input: object) => {
  const r = normaliseRecord(input);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.record.severity;
};

describe('record severity: what leaked, and how', () => {
  it('rises from identity only to a hash, a plaintext password, a stealer-log credential', () => {
    expect(severityOf({ email: 'a@sev.example' })).toBe('low');
    expect(severityOf({ username: 'a', phone: '+33123456789', full_name: 'A B' })).toBe('low');
    expect(severityOf({ username: 'a', password_sha1: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3' })).toBe('medium');
    expect(severityOf({ username: 'a', extra: { password_hash: '5f4dcc3b5aa765d61d8327deb882cf99', hash_type: 'md5' } })).toBe('medium');
    expect(severityOf({ email: 'a@sev.example', password: 'hunter2' })).toBe('high');
    expect(severityOf({ email: 'a@sev.example', password: 'hunter2', extra: { url: 'https://sev.example/login' } })).toBe('critical');
    expect(severityOf({ username: 'a', password: 'hunter2', extra: { app: 'com.sev.android' } })).toBe('critical');
    // A stealer-log line whose secret is a hash exposes a hash.
    expect(severityOf({ username: 'a', password_sha1: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', extra: { url: 'https://sev.example/' } })).toBe('medium');
    expect(recordSeverity({ password_masked: null, password_sha1: null, extra: {} })).toBe('low');
  });
});

describe('severity in search and alerts (API.md)', () => {
  let t: TestApp;
  let staff: User;
  let analyst: User;
  let stranger: User;
  let source: string;
  const post = (body: string | object[]) =>
    t.as(staff, {
      method: 'POST',
      url: `/api/v1/leaks/sources/${source}/records/`,
      ...(typeof body === 'string' ? { headers: { 'content-type': 'text/plain' }, payload: body } : { payload: body }),
    });
  const get = (url: string, as: User = analyst) => t.as(as, { method: 'GET', url });
  const monitor = async (body: object) => {
    const res = await t.as(analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { backfill: false, ...body } });
    expect(res.statusCode).toBe(201);
    return json(res) as { id: string; severity: string | null };
  };
  const alertsOf = async (monitorId: string, qs = ''): Promise<Record<string, [string, string]>> =>
    Object.fromEntries(
      (json(await get(`/api/v1/monitoring/${monitorId}/alerts/?page_size=100${qs}`)).results as Array<{ severity: string; leak_record: { email: string | null; username: string | null; severity: string } }>).map(
        (a) => [a.leak_record.email ?? a.leak_record.username, [a.severity, a.leak_record.severity]],
      ),
    );

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'sev-platform', true)).owner;
    const customer = await t.createOrg('enterprise', 'sev-customer');
    analyst = await t.createUser(customer, 'analyst');
    stranger = (await t.createOrg('enterprise', 'sev-stranger')).owner;
    source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Severity dump', kind: 'stealer_log' } })).id;
  });
  afterAll(() => t.close());

  it('derives an alert\'s severity from its record when the monitor sets none; a stealer-log credential is critical only for a URL of the monitor\'s domain', async () => {
    const derived = await monitor({ name: 'Corp (derived)', type: 'domain', terms: ['corp-sev.example'] });
    expect(derived.severity).toBeNull();
    const fixed = await monitor({ name: 'Corp (fixed)', type: 'domain', terms: ['corp-sev.example'], severity: 'medium' });
    const mail = await monitor({ name: 'Boss mail', type: 'email', terms: ['boss@corp-sev.example'] });
    expect(
      json(
        await post([
          { email: 'only@corp-sev.example' },
          { username: 'hashed', domain: 'corp-sev.example', password_sha1: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3' },
          { email: 'plain@corp-sev.example', password: 'Summer2026!' },
        ]),
      ),
    ).toMatchObject({ accepted: 3, rejected: [] });
    // Stealer-log lines: our VPN with a private login (critical), our employee's login to another site
    // (high), and the boss's login to our mail (critical for the e-mail monitor too).
    const lines = ['https://vpn.corp-sev.example/login:someone@gmail.example:pw-vpn-1', 'https://social.example/:elsewhere@corp-sev.example:pw-social', 'https://mail.corp-sev.example/:boss@corp-sev.example:pw-boss'];
    expect(json(await post(lines.join('\n')))).toMatchObject({ accepted: 3, rejected: [] });

    expect(await alertsOf(derived.id)).toEqual({
      'only@corp-sev.example': ['low', 'low'],
      hashed: ['medium', 'medium'],
      'plain@corp-sev.example': ['high', 'high'],
      'someone@gmail.example': ['critical', 'critical'],
      'elsewhere@corp-sev.example': ['high', 'critical'],
      'boss@corp-sev.example': ['critical', 'critical'],
    });
    expect(Object.values(await alertsOf(fixed.id)).map(([a]) => a)).toEqual(Array(6).fill('medium'));
    expect(await alertsOf(mail.id)).toEqual({ 'boss@corp-sev.example': ['critical', 'critical'] });

    // The alert lists filter by it.
    expect(Object.keys(await alertsOf(derived.id, '&severity=critical')).sort()).toEqual(['boss@corp-sev.example', 'someone@gmail.example']);
    const all = json(await get('/api/v1/monitoring/alerts/?severity=high,low&page_size=100')).results as Array<{ monitor: { id: string } }>;
    expect(all.filter((a) => a.monitor.id === derived.id)).toHaveLength(3);
  });

  it('sets a monitor\'s severity and takes it back (null), for the alerts raised afterwards', async () => {
    const mon = await monitor({ name: 'Toggle', type: 'domain', terms: ['toggle-sev.example'], severity: 'critical' });
    await post([{ email: 'one@toggle-sev.example' }]);
    const patched = await t.as(analyst, { method: 'PATCH', url: `/api/v1/monitoring/${mon.id}/`, payload: { severity: null } });
    expect(json(patched).severity).toBeNull();
    await post([{ email: 'two@toggle-sev.example' }]);
    expect(await alertsOf(mon.id)).toEqual({ 'one@toggle-sev.example': ['critical', 'low'], 'two@toggle-sev.example': ['low', 'low'] });
    const bad = await t.as(analyst, { method: 'PATCH', url: `/api/v1/monitoring/${mon.id}/`, payload: { severity: 'urgent' } });
    expect(bad.statusCode).toBe(400);
    expect(json(await get(`/api/v1/monitoring/${mon.id}/`)).severity).toBeNull();
  });

  it('filters the search by severity, refusing one it does not know', async () => {
    const severities = async (qs: string, as: User = analyst) =>
      (json(await get(`/api/v1/leaks/search/?domain=corp-sev.example&page_size=100${qs}`, as)).results as Array<{ severity: string }>).map((r) => r.severity).sort();
    expect(await severities('')).toEqual(['critical', 'critical', 'high', 'low', 'medium']);
    expect(await severities('&severity=critical,high')).toEqual(['critical', 'critical', 'high']);
    expect(await severities('&severity=low', stranger)).toEqual(['low']);
    const bad = await get('/api/v1/leaks/search/?domain=corp-sev.example&severity=severe');
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(json(bad).errors).toEqual([expect.objectContaining({ field: 'severity' })]);
    // A saved search keeps the filter.
    const saved = await t.as(analyst, { method: 'POST', url: '/api/v1/leaks/saved-searches/', payload: { name: 'Worst', query: { domain: 'corp-sev.example', severity: 'critical' } } });
    expect(saved.statusCode).toBe(201);
    const run = json(await get(`/api/v1/leaks/saved-searches/${json(saved).id}/results/`));
    expect(run.results.map((r: { severity: string }) => r.severity)).toEqual(['critical', 'critical']);
  });
});
