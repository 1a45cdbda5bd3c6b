import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, PASSWORD, TEST_PG_URL, type TestApp, type TestOrg } from '../helpers/build-app.js';
import { stixProblems } from '../helpers/stix-schema.js';

const TAXII = 'application/taxii+json;version=2.1';
const STIX = 'application/stix+json;version=2.1';
type Obj = Record<string, unknown> & { id: string; type: string };
type Envelope = { more: boolean; next?: string; objects?: Obj[] };

describe('TAXII 2.1 (API.md section 10)', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let staff: User;
  const m = {} as Record<Role, User>;
  let key: string;
  let otherKey: string;
  let cols: { indicators: string; exposures: string };

  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const get = (url: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url, headers: { accept: TAXII, authorization: `Bearer ${key}`, ...headers } });
  const root = () => `/taxii2/${org.id}`;
  const objectsUrl = (kind: keyof typeof cols, query = '') => `${root()}/collections/${cols[kind]}/objects/${query}`;
  const objects = async (kind: keyof typeof cols, query = '') => {
    const res = await get(objectsUrl(kind, query));
    expect(res.statusCode, res.body).toBe(200);
    return json(res) as Envelope;
  };
  /** Every object of a collection, walking `next` pages of `limit`. */
  const walk = async (kind: keyof typeof cols, limit: number, between?: () => Promise<void>) => {
    const seen: Obj[] = [];
    let next: string | undefined;
    for (;;) {
      const page = await objects(kind, `?limit=${limit}${next ? `&next=${next}` : ''}`);
      seen.push(...(page.objects ?? []));
      if (!page.more) return seen;
      next = page.next;
      await between?.();
    }
  };
  const incident = async (iocs: object[], as: User = m.analyst) => {
    const res = await t.as(as, { method: 'POST', url: '/api/v1/incidents/', payload: { title: `inc ${Math.random()}`, iocs } });
    expect(res.statusCode, res.body).toBe(201);
    return json(res) as { id: string };
  };
  const iocsOf = async (incidentId: string) => json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/incidents/${incidentId}/iocs/` })).results as Array<{ id: string; value: string }>;
  const valid = (list: Obj[]) => expect(list.flatMap((o) => stixProblems(o))).toEqual([]);

  beforeAll(async () => {
    t = await buildTestApp();
    const team = await t.createTeam('enterprise', 'taxii-readers', 'taxii');
    org = team.org;
    Object.assign(m, team.members);
    other = await t.createOrg('enterprise', 'taxii-strangers');
    staff = (await t.createOrg('enterprise', 'taxii-platform', true)).owner;
    const made = async (as: User) => json(await t.as(as, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'TAXII client', role: 'viewer' } })).key as string;
    key = await made(m.analyst);
    otherKey = await made(other.owner);
    const res = await get('/taxii2/' + org.id + '/collections/');
    const list = json(res).collections as Array<{ id: string; title: string }>;
    cols = { indicators: list.find((c) => c.title === 'Indicators')!.id, exposures: list.find((c) => c.title === 'Exposures')!.id };
  });
  afterAll(() => t.close());

  describe('discovery, API roots and collections', () => {
    it("answers the caller's API root, in TAXII's media type", async () => {
      const res = await get('/taxii2/');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(TAXII);
      const body = json(res);
      expect(body.api_roots).toEqual([`http://localhost:80/taxii2/${org.id}/`]);
      expect(body.default).toBe(body.api_roots[0]);
      const rootRes = json(await get(`${root()}/`));
      expect(rootRes).toEqual({ title: org.name, description: expect.any(String), versions: [TAXII], max_content_length: expect.any(Number) });
    });

    it('gives two collections with UUIDv4 ids that never change, read-only', async () => {
      const first = json(await get(`${root()}/collections/`)).collections as Array<Record<string, unknown>>;
      expect(first).toHaveLength(2);
      for (const c of first) {
        expect(c.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(c).toMatchObject({ can_read: true, can_write: false, media_types: [STIX] });
        expect(json(await get(`${root()}/collections/${c.id as string}/`))).toEqual(c);
      }
      expect(json(await get(`${root()}/collections/`)).collections).toEqual(first);
      const refused = await t.inject({ method: 'POST', url: objectsUrl('indicators'), headers: { accept: TAXII, authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: {} });
      expect(refused.statusCode).toBe(403);
      expect(json(refused)).toMatchObject({ title: 'Forbidden', http_status: '403' });
    });

    it("hides another organization's root and collections (404, TAXII error format)", async () => {
      for (const url of [`/taxii2/${other.id}/`, `/taxii2/${other.id}/collections/`, `${root()}/collections/00000000-0000-4000-8000-000000000000/objects/`]) {
        const res = await get(url);
        expect(res.statusCode, url).toBe(404);
        expect(res.headers['content-type']).toBe(TAXII);
        expect(json(res)).toMatchObject({ title: 'Not Found', http_status: '404', error_id: expect.any(String) });
      }
      // The stranger's own collections have other ids, and ours are not theirs.
      const theirs = json(await get(`/taxii2/${other.id}/collections/`, { authorization: `Bearer ${otherKey}` })).collections as Array<{ id: string }>;
      expect(theirs.map((c) => c.id).sort()).not.toEqual(Object.values(cols).sort());
      expect((await get(objectsUrl('indicators'), { authorization: `Bearer ${otherKey}` })).statusCode).toBe(404);
      expect((await get(`/taxii2/${other.id}/collections/${cols.indicators}/objects/`, { authorization: `Bearer ${otherKey}` })).statusCode).toBe(404);
    });

    it('answers unknown paths and methods in the TAXII error format', async () => {
      const unknown = await get(`${root()}/nothing/here/`);
      expect(unknown.statusCode).toBe(404);
      expect(json(unknown)).toMatchObject({ http_status: '404' });
      const method = await t.inject({ method: 'PUT', url: `${root()}/collections/`, headers: { accept: TAXII, authorization: `Bearer ${key}` } });
      expect(method.statusCode).toBe(405);
      expect(json(method)).toMatchObject({ http_status: '405' });
    });
  });

  describe('media types and authentication', () => {
    it('406 for an Accept it cannot answer; STIX media type taken for objects', async () => {
      for (const accept of ['application/json', 'text/html', 'application/taxii+json;version=2.0', 'application/stix+json;version=2.1']) {
        const res = await get(`${root()}/collections/`, { accept });
        expect(res.statusCode, accept).toBe(406);
        expect(res.headers['content-type']).toBe(TAXII);
        expect(json(res)).toMatchObject({ title: 'Not Acceptable', http_status: '406' });
      }
      for (const accept of ['application/taxii+json', '*/*', 'application/json;q=0.5, application/taxii+json;version=2.1']) expect((await get(`${root()}/collections/`, { accept })).statusCode, accept).toBe(200);
      const stix = await get(objectsUrl('indicators'), { accept: STIX });
      expect(stix.statusCode).toBe(200);
      expect(stix.headers['content-type']).toBe(STIX);
    });

    it('takes Basic (password, or API key) and Bearer (API key or JWT); 401 asks for Basic', async () => {
      const ways = [basic(m.viewer.username, PASSWORD), basic('anyone', key), `Bearer ${key}`, `Bearer ${await t.token(m.viewer)}`];
      for (const authorization of ways) expect((await get(`${root()}/`, { authorization })).statusCode, authorization.slice(0, 12)).toBe(200);
      expect((await get(`${root()}/`, { authorization: '', 'x-api-key': key })).statusCode).toBe(200);
      for (const authorization of [basic(m.viewer.username, 'wrong password'), basic('anyone', 'tm_notakey'), 'Basic !!!', '']) {
        const res = await get(`${root()}/`, { authorization });
        expect(res.statusCode, authorization).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Basic realm="threatmon TAXII", charset="UTF-8"');
        expect(json(res)).toMatchObject({ http_status: '401' });
      }
      // A failed Basic password is a failed login: audited like one.
      const failed = await t.db.selectFrom('audit_log').select('action').where('action', '=', 'auth.login_failed').execute();
      expect(failed.length).toBeGreaterThan(0);
    });
  });

  describe('the indicators collection', () => {
    let incidentId: string;

    it('holds each IOC as the export builds it, valid STIX 2.1, with valid_until where it expires', async () => {
      const inc = await incident([
        { type: 'ipv4', value: '203.0.113.5', expires_at: '2027-01-01T00:00:00.000Z', tlp: 'red' },
        { type: 'domain', value: 'evil.example', tags: ['c2'] },
        { type: 'cve', value: 'CVE-2024-3094' },
        { type: 'other', value: 'a mutex name' },
      ]);
      incidentId = inc.id;
      const all = (await objects('indicators')).objects!;
      valid(all);
      const indicators = all.filter((o) => o.type === 'indicator');
      expect(indicators.map((o) => o.pattern).sort()).toEqual(["[domain-name:value = 'evil.example']", "[ipv4-addr:value = '203.0.113.5']"]);
      const ip = indicators.find((o) => String(o.pattern).includes('203.0.113.5'))!;
      expect(ip).toMatchObject({ valid_until: '2027-01-01T00:00:00.000Z', object_marking_refs: ['marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1'] });
      expect(all.filter((o) => o.type === 'vulnerability').map((o) => o.name)).toEqual(['CVE-2024-3094']);
      // What the objects refer to is in the collection, before them.
      const ids = all.map((o) => o.id);
      for (const [i, o] of all.entries()) {
        for (const r of [o.created_by_ref, ...((o.object_marking_refs as string[] | undefined) ?? [])].filter(Boolean)) expect(ids.indexOf(r as string), `${o.id} -> ${String(r)}`).toBeLessThan(i);
      }
      // The export gives the same indicator.
      const bundle = json(await t.as(m.viewer, { method: 'GET', url: `/api/v1/incidents/${inc.id}/export/` }));
      expect(bundle.objects.find((o: Obj) => o.id === ip.id)).toEqual(ip);
    });

    it('refuses an expiry before the validity starts (400, nothing added)', async () => {
      const res = await t.as(m.analyst, { method: 'POST', url: `/api/v1/incidents/${incidentId}/iocs/`, payload: { type: 'ipv4', value: '198.51.100.1', first_seen: '2026-06-01T00:00:00Z', expires_at: '2026-05-01T00:00:00Z' } });
      expect(res.statusCode).toBe(400);
      expect(json(res).errors[0].field).toBe('expires_at');
      expect((await iocsOf(incidentId)).map((i) => i.value)).not.toContain('198.51.100.1');
    });

    it('gives a changed IOC as a new version and a deleted one as a revoked version', async () => {
      const ioc = (await iocsOf(incidentId)).find((i) => i.value === 'evil.example')!;
      const before = (await objects('indicators', '?match[type]=indicator')).objects!.find((o) => o.name === 'domain: evil.example')!;
      const patched = await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/incidents/${incidentId}/iocs/${ioc.id}/`, payload: { description: 'C2 of the campaign' } });
      expect(patched.statusCode).toBe(200);
      const after = (await objects('indicators', `?match[id]=${before.id}`)).objects!;
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({ id: before.id, description: 'C2 of the campaign' });
      // Same clock instant: the new version is still later than the one it replaces.
      expect(String(after[0]!.modified) > String(before.modified)).toBe(true);
      const versions = json(await get(`${root()}/collections/${cols.indicators}/objects/${before.id}/versions/`));
      expect(versions).toEqual({ more: false, versions: [before.modified, after[0]!.modified] });
      expect((await objects('indicators', `?match[id]=${before.id}&match[version]=first`)).objects).toEqual([before]);
      expect((await objects('indicators', `?match[id]=${before.id}&match[version]=all`)).objects).toHaveLength(2);
      expect((await objects('indicators', `?match[id]=${before.id}&match[version]=${String(before.modified)}`)).objects).toEqual([before]);
      const one = json(await get(`${root()}/collections/${cols.indicators}/objects/${before.id}/`));
      expect(one.objects).toEqual(after);

      expect((await t.as(m.admin, { method: 'DELETE', url: `/api/v1/incidents/${incidentId}/iocs/${ioc.id}/` })).statusCode).toBe(204);
      const revoked = (await objects('indicators', `?match[id]=${before.id}`)).objects!;
      expect(revoked).toEqual([expect.objectContaining({ id: before.id, revoked: true })]);
      valid(revoked);
    });

    it('filters by type, id, spec_version and added_after; a manifest lists the same', async () => {
      const page = await get(objectsUrl('indicators'));
      const all = (json(page) as Envelope).objects!;
      expect(page.headers['x-taxii-date-added-first']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      const types = (await objects('indicators', '?match[type]=identity,marking-definition')).objects!.map((o) => o.type);
      expect(new Set(types)).toEqual(new Set(['identity', 'marking-definition']));
      expect((await objects('indicators', '?match[spec_version]=2.0')).objects).toBeUndefined();
      expect((await objects('indicators', '?match[spec_version]=2.0,2.1')).objects).toEqual(all);
      const manifest = await get(`${root()}/collections/${cols.indicators}/manifest/`);
      const entries = json(manifest).objects as Array<{ id: string; date_added: string; version: string; media_type: string }>;
      expect(entries.map((e) => e.id)).toEqual(all.map((o) => o.id));
      expect(entries.every((e) => e.media_type === STIX)).toBe(true);
      // added_after is exclusive: after the third object's date, the rest.
      expect((await objects('indicators', `?added_after=${entries[2]!.date_added}`)).objects).toEqual(all.slice(3));
      expect((await get(objectsUrl('indicators', '?added_after=yesterday'))).statusCode).toBe(400);
      expect((await get(objectsUrl('indicators', '?limit=0'))).statusCode).toBe(400);
      expect((await get(objectsUrl('indicators', '?next=bm9wZQ'))).statusCode).toBe(400);
      expect((await get(`${root()}/collections/${cols.indicators}/objects/indicator--00000000-0000-4000-8000-000000000000/`)).statusCode).toBe(404);
    });
  });

  describe('paging', () => {
    const ipsOf = (list: Obj[]) => list.filter((o) => o.type === 'indicator').map((o) => String(o.pattern));

    it('returns every object once, by next or by added_after, when a whole batch shares one instant', async () => {
      const before = (await walk('indicators', 1000)).length;
      // 1,500 IOCs in one transaction, at one clock instant: more than a page with one date would be.
      await incident(Array.from({ length: 1000 }, (_, i) => ({ type: 'ipv4', value: `10.1.${Math.floor(i / 250)}.${i % 250}` })));
      await incident(Array.from({ length: 500 }, (_, i) => ({ type: 'ipv4', value: `10.2.${Math.floor(i / 250)}.${i % 250}` })));
      const byNext = await walk('indicators', 333);
      expect(byNext.length).toBe(before + 1500);
      expect(new Set(byNext.map((o) => o.id)).size).toBe(byNext.length);
      let after = '';
      const byDate: Obj[] = [];
      for (;;) {
        const res = await get(objectsUrl('indicators', `?limit=333${after ? `&added_after=${after}` : ''}`));
        const page = json(res) as Envelope;
        byDate.push(...(page.objects ?? []));
        if (!page.more) break;
        after = String(res.headers['x-taxii-date-added-last']);
      }
      expect(byDate).toEqual(byNext);
    });

    it('misses nothing and repeats nothing when objects are added while a client pages', async () => {
      const seenBefore = await walk('indicators', 1000);
      let n = 0;
      const walked = await walk('indicators', 250, async () => {
        n += 1;
        if (n <= 4) await incident(Array.from({ length: 100 }, (_, i) => ({ type: 'ipv4', value: `10.9.${n}.${i}` })));
      });
      expect(new Set(walked.map((o) => o.id)).size).toBe(walked.length);
      expect(ipsOf(walked).filter((p) => p.includes("'10.9.")).length).toBe(400);
      expect(walked.length).toBe(seenBefore.length + 400);
    });

    it("dates new versions in the background's turn too, at the clock's time, without waiting for a read", async () => {
      await incident([{ type: 'ipv4', value: '192.0.2.200' }]);
      const pending = () => t.db.selectFrom('taxii_objects').select(['added_us']).where('organization_id', '=', org.id).where('added_us', 'is', null).execute();
      expect((await pending()).length).toBeGreaterThan(0);
      t.clock.advance(3600);
      const before = new Date(t.clock.now().getTime() - 1).toISOString();
      await t.services.taxii.stampAll();
      expect(await pending()).toEqual([]);
      const res = await get(objectsUrl('indicators', `?match[type]=indicator&added_after=${before}`));
      expect(String(res.headers['x-taxii-date-added-last']).slice(0, 19)).toBe(t.clock.now().toISOString().slice(0, 19));
      expect((json(res) as Envelope).objects).toEqual([expect.objectContaining({ pattern: "[ipv4-addr:value = '192.0.2.200']" })]);
    });

    it.skipIf(!TEST_PG_URL)('dates versions in commit order: one written before a page but committed after it comes after it', async () => {
      // Where a client that has read everything stands.
      let last = '';
      for (let more = true; more; ) {
        const res = await get(objectsUrl('indicators', last ? `?added_after=${last}` : ''));
        more = (json(res) as Envelope).more;
        last = String(res.headers['x-taxii-date-added-last'] ?? last);
      }
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const inside = new Promise<void>((r) => (written = r));
      // A slow transaction: an IOC's event (and so its version) is written, then it waits to commit.
      const slow = t.db.transaction().execute(async (trx) => {
        await t.app.services.outbox.record(trx, [
          { organizationId: org.id, type: 'ioc.created', data: { id: '0190b0c2-0000-7000-8000-00000000aaaa', incident: '0190b0c2-0000-7000-8000-00000000bbbb', type: 'ipv4', value: '192.0.2.77', description: '', tlp: 'amber', tags: [], first_seen: null, last_seen: null, expires_at: null, created_by: null, created_at: t.clock.now().toISOString(), updated_at: t.clock.now().toISOString() } },
        ]);
        written();
        await gate;
      });
      await inside;
      let mid;
      try {
        // Meanwhile a quick one commits, and a reader pages past it.
        await incident([{ type: 'ipv4', value: '192.0.2.78' }]);
        mid = await get(objectsUrl('indicators', `?added_after=${last}`));
      } finally {
        release();
        await slow;
      }
      expect(ipsOf((json(mid) as Envelope).objects ?? [])).toEqual(["[ipv4-addr:value = '192.0.2.78']"]);
      const rest = (await objects('indicators', `?added_after=${String(mid.headers['x-taxii-date-added-last'])}`)).objects ?? [];
      expect(ipsOf(rest)).toEqual(["[ipv4-addr:value = '192.0.2.77']"]);
    });
  });

  describe('the exposures collection', () => {
    it('holds each alert as a sighting of the organization in its leak source, with the observables, valid STIX 2.1', async () => {
      const monitor = json(await t.as(m.analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Our domain', type: 'domain', terms: ['taxii.example'] } }));
      const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Combolist 2026' } })).id as string;
      const ingest = await t.as(staff, {
        method: 'POST',
        url: `/api/v1/leaks/sources/${source}/records/`,
        payload: [
          { email: 'ceo@taxii.example', username: 'theboss', ip: '203.0.113.9', password: 'hunter2', leaked_at: '2026-10-01T00:00:00Z' },
          { email: 'nobody@elsewhere.example' },
        ],
      });
      expect(json(ingest).alerts_raised).toBe(1);
      const all = (await objects('exposures')).objects!;
      valid(all);
      const sighting = all.find((o) => o.type === 'sighting')!;
      const byId = new Map(all.map((o) => [o.id, o]));
      expect(byId.get(sighting.sighting_of_ref as string)).toMatchObject({ type: 'identity', name: org.name, identity_class: 'organization' });
      expect(byId.get((sighting.where_sighted_refs as string[])[0]!)).toMatchObject({ type: 'identity', name: 'Combolist 2026' });
      const observed = byId.get((sighting.observed_data_refs as string[])[0]!)!;
      expect(observed).toMatchObject({ type: 'observed-data', first_observed: '2026-10-01T00:00:00.000Z', number_observed: 1 });
      const observables = (observed.object_refs as string[]).map((id) => byId.get(id)!);
      expect(observables.map((o) => [o.type, o.value ?? o.account_login])).toEqual([
        ['email-addr', 'ceo@taxii.example'],
        ['user-account', 'theboss'],
        ['domain-name', 'taxii.example'],
        ['ipv4-addr', '203.0.113.9'],
      ]);
      expect(sighting).toMatchObject({ x_threatmon_monitor_id: monitor.id, x_threatmon_status: 'new', x_threatmon_matched_field: 'domain', x_threatmon_has_password: true });
      // Every object comes after what it refers to; no password in any form.
      const order = all.map((o) => o.id);
      for (const r of [sighting.sighting_of_ref, ...(sighting.where_sighted_refs as string[]), ...(sighting.observed_data_refs as string[])]) expect(order.indexOf(r as string)).toBeLessThan(order.indexOf(sighting.id));
      expect(JSON.stringify(all)).not.toContain('hunter2');

      // A triaged alert is a new version of its sighting.
      const alert = json(await t.as(m.viewer, { method: 'GET', url: '/api/v1/monitoring/alerts/' })).results[0];
      expect((await t.as(m.analyst, { method: 'PATCH', url: `/api/v1/monitoring/alerts/${alert.id as string}/`, payload: { status: 'acknowledged' } })).statusCode).toBe(200);
      const latest = (await objects('exposures', '?match[type]=sighting')).objects!;
      expect(latest).toEqual([expect.objectContaining({ id: sighting.id, x_threatmon_status: 'acknowledged' })]);
      expect(json(await get(`${root()}/collections/${cols.exposures}/objects/${sighting.id}/versions/`)).versions).toHaveLength(2);
      // The stranger's exposures hold none of it.
      const theirCols = json(await get(`/taxii2/${other.id}/collections/`, { authorization: `Bearer ${otherKey}` })).collections as Array<{ id: string; title: string }>;
      const theirs = json(await get(`/taxii2/${other.id}/collections/${theirCols.find((c) => c.title === 'Exposures')!.id}/objects/`, { authorization: `Bearer ${otherKey}` }));
      expect(theirs).toEqual({ more: false });
    });
  });
});

describe('TAXII 2.1 and the plan rate limit', () => {
  it("counts TAXII requests against the organization's plan: past it, 429 as a TAXII error with Retry-After", async () => {
    const t = await buildTestApp({ THREATMON_PLAN_LIMITS: 'starter=3' });
    try {
      const team = await t.createTeam('starter', 'taxii-limited', 'taxii-limited');
      const headers = { accept: TAXII, authorization: `Bearer ${await t.token(team.members.viewer)}` };
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 4; i++) {
        last = await t.inject({ method: 'GET', url: `/taxii2/${team.org.id}/`, headers });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(last!.headers['content-type']).toBe(TAXII);
      expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
      expect(json(last!)).toMatchObject({ title: 'Too Many Requests', http_status: '429', error_code: 'rate_limited' });
    } finally {
      await t.close();
    }
  });
});
