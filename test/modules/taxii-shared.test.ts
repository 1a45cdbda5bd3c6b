import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp, type TestOrg } from '../helpers/build-app.js';

const TAXII = 'application/taxii+json;version=2.1';
type Obj = Record<string, unknown> & { id: string; type: string };

/** The objects many exposures share (the leak source's identity above all): one version each until they change. */
describe('TAXII exposures: shared objects', () => {
  let t: TestApp;
  let org: TestOrg;
  let staff: User;
  let key: string;
  let exposures: string;
  let source: string;

  const get = (url: string) => t.inject({ method: 'GET', url, headers: { accept: TAXII, authorization: `Bearer ${key}` } });
  const base = () => `/taxii2/${org.id}/collections/${exposures}/objects/`;
  const ingest = async (email: string) => {
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email }] });
    expect(json(res).alerts_raised).toBe(1);
  };

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg('enterprise', 'taxii-shared');
    staff = (await t.createOrg('enterprise', 'taxii-shared-platform', true)).owner;
    key = json(await t.as(org.owner, { method: 'POST', url: '/api/v1/auth/api-keys/', payload: { name: 'client' } })).key as string;
    const cols = json(await get(`/taxii2/${org.id}/collections/`)).collections as Array<{ id: string; title: string }>;
    exposures = cols.find((c) => c.title === 'Exposures')!.id;
    await t.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Ours', type: 'domain', terms: ['shared.example'] } });
    source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Shared dump' } })).id as string;
  });
  afterAll(() => t.close());

  it('gives a leak source one identity however many alerts sight it at different times', async () => {
    for (const name of ['a', 'b', 'c']) {
      await ingest(`${name}@shared.example`);
      t.clock.advance(3600);
    }
    const all = (json(await get(`${base()}?limit=1000`)).objects ?? []) as Obj[];
    const ids = all.map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(all.filter((o) => o.type === 'sighting')).toHaveLength(3);
    const sourceId = (all.find((o) => o.type === 'sighting')!.where_sighted_refs as string[])[0]!;
    const versions = json(await get(`${base()}${sourceId}/versions/`)).versions as string[];
    expect(versions).toHaveLength(1);
    const first = json(await get(`${base()}${sourceId}/?match[version]=first`)).objects as Obj[];
    const last = json(await get(`${base()}${sourceId}/`)).objects as Obj[];
    expect(first).toHaveLength(1);
    expect(last).toEqual(first);
    const orgIdentity = all.find((o) => o.type === 'identity' && o.identity_class === 'organization')!;
    expect(json(await get(`${base()}${orgIdentity.id}/versions/`)).versions).toHaveLength(1);
  });

  it('adds a version of the source identity only when it changes, with the same created', async () => {
    const sighted = (json(await get(`${base()}?match[type]=identity`)).objects as Obj[]).find((o) => o.name === 'Shared dump')!;
    expect((await t.as(staff, { method: 'PATCH', url: `/api/v1/leaks/sources/${source}/`, payload: { name: 'Shared dump, renamed' } })).statusCode).toBe(200);
    t.clock.advance(3600);
    await ingest('d@shared.example');
    const versions = json(await get(`${base()}${sighted.id}/versions/`)).versions as string[];
    expect(versions).toHaveLength(2);
    const all = json(await get(`${base()}${sighted.id}/?match[version]=all`)).objects as Obj[];
    expect(all.map((o) => o.name)).toEqual(['Shared dump', 'Shared dump, renamed']);
    expect(all[1]!.created).toBe(all[0]!.created);
    expect(String(all[1]!.modified) > String(all[0]!.modified)).toBe(true);
    // Another alert of the renamed source adds nothing.
    await ingest('e@shared.example');
    expect(json(await get(`${base()}${sighted.id}/versions/`)).versions).toHaveLength(2);
  });

  it("answers a write in TAXII's own media type 403, as the collections are read-only", async () => {
    for (const type of [TAXII, 'application/taxii+json', 'application/json']) {
      const res = await t.inject({ method: 'POST', url: base(), headers: { accept: TAXII, 'content-type': type, authorization: `Bearer ${key}` }, payload: JSON.stringify({ objects: [] }) });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(403);
      expect(json(res)).toMatchObject({ http_status: '403' });
    }
  });
});
