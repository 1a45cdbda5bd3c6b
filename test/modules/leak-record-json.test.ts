import { createHash } from 'node:crypto';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageSchema } from '../../src/http/listing.js';
import { LeakRecordSchema } from '../../src/modules/leaks/leaks.schemas.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex').toUpperCase();

/** The database writes each record's JSON (see RECORD_JSON in leaks.service.ts): it must be what LeakRecordSchema says. */
describe('leak record JSON', () => {
  let t: TestApp;
  let staff: User;
  let analyst: User;
  let viewer: User;
  const search = (qs: string, as: User = viewer) => t.as(as, { method: 'GET', url: `/api/v1/leaks/search/${qs}` });

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'platform', true)).owner;
    const org = await t.createOrg('enterprise', 'customer');
    analyst = await t.createUser(org, 'analyst', 'cust-analyst');
    viewer = await t.createUser(org, 'viewer', 'cust-viewer');
  });
  afterAll(() => t.close());

  it('returns each record as the schema says, the same from search, the record and a saved search (JSON built by the database)', async () => {
    // Characters JSON must escape, and some it need not: quotes, backslash, controls, U+2028,
    // a character outside the BMP, markup.
    const odd = 'a"b\\c\n\t\u0001\u001f\u2028é😀</script>';
    const src = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: `Odd ${odd}` } })).id as string;
    const records = [
      { email: 'json.shape@escape.example', username: `u${odd}`, domain: 'escape.example', ip: '2001:db8::42', phone: '+33 1 23 45 67 89', full_name: odd, password: 'pw-shape-42', extra: { [`k${odd}`]: odd, n: 7 }, leaked_at: '2023-05-06T07:08:09.123456Z' },
      { username: 'json-shape-bare' },
    ];
    const report = json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${src}/records/`, payload: records }));
    expect(report).toMatchObject({ accepted: 2, rejected: [] });
    const full = json(await search('?domain=escape.example')).results[0];
    const expected = {
      id: full.id,
      source: { id: src, name: `Odd ${odd}` },
      email: 'json.shape@escape.example',
      username: `u${odd}`,
      domain: 'escape.example',
      ip: '2001:db8::42',
      phone: '+33123456789',
      full_name: odd,
      password_masked: 'p*********2',
      password_sha1_prefix: sha1('pw-shape-42').slice(0, 5),
      has_password: true,
      severity: 'high',
      extra: { [`k${odd}`]: odd, n: '7' },
      leaked_at: '2023-05-06T07:08:09.123Z',
      created_at: t.clock.now().toISOString(),
    };
    expect(full).toEqual(expected);
    // In the schema's order, as the serializer wrote it.
    // Every field but indicator_matches, which only a record an indicator names carries (added at read).
    expect(Object.keys(full)).toEqual(Object.keys(LeakRecordSchema.properties).filter((k) => k !== 'indicator_matches'));
    const bare = json(await search('?username=json-shape-bare')).results[0];
    expect(bare).toEqual({ ...Object.fromEntries(Object.keys(expected).map((k) => [k, null])), id: bare.id, source: expected.source, username: 'json-shape-bare', has_password: false, severity: 'low', extra: {}, created_at: expected.created_at });

    const saved = json(await t.as(analyst, { method: 'POST', url: '/api/v1/leaks/saved-searches/', payload: { name: 'shape', query: { source: src } } }));
    const responses = [
      await search(`?source=${src}&ordering=created_at`),
      await search('?q=json%20shape'),
      await search('?q=json%20shape', staff),
      await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/saved-searches/${saved.id}/results/` }),
    ];
    for (const res of responses) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      // Compact JSON, as JSON.stringify writes it.
      expect(res.body).toBe(JSON.stringify(json(res)));
      const page = json(res);
      expect(Value.Check(PageSchema(LeakRecordSchema), page)).toBe(true);
      expect(page.results).toEqual(expect.arrayContaining([expected]));
    }
    const one = await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/records/${full.id}/` });
    expect(one.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(one.body).toBe(JSON.stringify(expected));
  });

});
