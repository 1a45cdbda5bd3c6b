import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/**
 * A monitor finds the same records whether they arrive after it (the ingest matcher) or before it
 * (its backfill), for every monitor type, on a corpus built to tell the two apart: e-mails at the
 * watched domain with another domain field, subdomains and look-alikes, case, CIDR edges, IPv6,
 * keywords in every text field.
 */
const MONITORS = [
  { type: 'domain', terms: ['acme.example', 'xn--bcher-kva.example'] },
  { type: 'email', terms: ['ceo@acme.example', 'cfo@partner.example'] },
  { type: 'username', terms: ['BigBoss', 'root'] },
  { type: 'ip', terms: ['203.0.113.0/24', '198.51.100.7', '2001:db8::/32'] },
  { type: 'keyword', terms: ['nightjar', 'acme'] },
] as const;

const CORPUS = [
  // The domain field names a site; the e-mail is at the watched domain (a stealer log's line).
  { email: 'alice@acme.example', domain: 'login.bank.example', username: 'alice' },
  { email: 'bob@mail.acme.example', domain: 'shop.example' },
  // The reverse: the domain field is watched, the e-mail is elsewhere.
  { email: 'carol@gmail.example', domain: 'vpn.acme.example' },
  { email: 'dave@gmail.example', domain: 'acme.example' },
  // Both at the watched domain, apart and together.
  { email: 'erin@sub.acme.example', domain: 'other.acme.example' },
  { email: 'ceo@acme.example' },
  { email: 'CEO@ACME.EXAMPLE', full_name: 'Upper Case' },
  // Look-alikes that no domain term covers.
  { email: 'frank@acme.example.net', domain: 'notacme.example' },
  { email: 'grace@xacme.example' },
  { email: 'heidi@partner.example', domain: 'acme.example.org' },
  // IDN, as Unicode and as punycode.
  { email: 'ivan@bücher.example', domain: 'store.example' },
  { email: 'judy@store.example', domain: 'shop.xn--bcher-kva.example' },
  { email: 'cfo@partner.example', domain: 'acme.example' },
  // Usernames in other cases, and one that only contains a term.
  { username: 'bigboss', ip: '203.0.113.0' },
  { username: 'BIGBOSS', ip: '203.0.113.255' },
  { username: 'rootless', ip: '203.0.114.1' },
  { username: 'Root', ip: '198.51.100.8' },
  { username: 'mallory', ip: '198.51.100.7' },
  { username: 'niaj', ip: '2001:db8::1' },
  { username: 'olivia', ip: '2001:db9::1' },
  // Keywords in every text field.
  { username: 'peggy', full_name: 'Operation NIGHTJAR', phone: '+1 555 0100' },
  { username: 'rupert', extra: { project: 'nightjar-2', note: 'Acme payroll' } },
  { email: 'nightjar@birds.example' },
  { email: 'sybil@acme-corp.example' },
];

describe('monitor scans find what the ingest matcher finds, for every type', () => {
  let t: TestApp;
  let before: User;
  let after: User;
  let staff: User;
  const monitorIds = { before: {} as Record<string, string>, after: {} as Record<string, string> };
  const create = async (as: User) => {
    const ids: Record<string, string> = {};
    for (const m of MONITORS) ids[m.type] = json(await t.as(as, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: m.type, type: m.type, terms: m.terms } })).id;
    return ids;
  };
  /** What a monitor found: each alert's record (by its e-mail or username), term and field. */
  const found = async (monitorId: string) =>
    (
      await t.db
        .selectFrom('monitor_alerts')
        .innerJoin('leak_records', 'leak_records.id', 'monitor_alerts.leak_record_id')
        .select(['leak_records.email', 'leak_records.username', 'leak_records.domain', 'monitor_alerts.matched_term', 'monitor_alerts.matched_field'])
        .where('monitor_alerts.monitor_id', '=', monitorId)
        .execute()
    )
      .map((a) => `${a.email ?? a.username}|${a.domain}|${a.matched_term}|${a.matched_field}`)
      .sort();

  beforeAll(async () => {
    t = await buildTestApp({}, { scans: { chunk: 3 } });
    before = (await t.createOrg('enterprise', 'watching-first')).owner;
    after = (await t.createOrg('enterprise', 'watching-later')).owner;
    staff = (await t.createOrg('enterprise', 'parity-platform', true)).owner;
    // Monitors of one organization exist before the records arrive: they match at ingest.
    monitorIds.before = await create(before);
    await t.services.monitoring.scans.runPending();
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Parity dump' } })).id;
    const res = json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: CORPUS }));
    expect(res).toMatchObject({ accepted: CORPUS.length, rejected: [] });
    // The other organization's monitors come after: their backfills find the records.
    monitorIds.after = await create(after);
    await t.services.monitoring.scans.runPending();
  });
  afterAll(() => t.close());

  it.each(MONITORS.map((m) => [m.type]))('%s: the backfill finds exactly the records the matcher alerted on', async (type) => {
    const atIngest = await found(monitorIds.before[type] as string);
    expect(atIngest.length).toBeGreaterThan(0);
    expect(await found(monitorIds.after[type] as string)).toEqual(atIngest);
  });

  it('domain: finds the e-mail at the watched domain behind another domain field, and no look-alike', async () => {
    const emails = (await found(monitorIds.after.domain as string)).map((f) => f.split('|')[0]);
    expect(emails).toEqual(expect.arrayContaining(['alice@acme.example', 'bob@mail.acme.example', 'carol@gmail.example', 'dave@gmail.example', 'erin@sub.acme.example', 'ivan@xn--bcher-kva.example', 'judy@store.example']));
    for (const lookAlike of ['frank@acme.example.net', 'grace@xacme.example', 'heidi@partner.example', 'sybil@acme-corp.example']) expect(emails).not.toContain(lookAlike);
  });

  it('a re-scan finds nothing new', async () => {
    const id = monitorIds.after.domain as string;
    const was = await found(id);
    expect((await t.as(after, { method: 'POST', url: `/api/v1/monitoring/${id}/scan/` })).statusCode).toBe(202);
    await t.services.monitoring.scans.runPending();
    expect(await found(id)).toEqual(was);
  });
});
