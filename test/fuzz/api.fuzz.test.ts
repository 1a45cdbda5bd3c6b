import { fc, it as itProp } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../helpers/build-app.js';
import { type FuzzRequest, type Operation, operationsOf, requestFor } from './requests.js';

/**
 * Every operation of /api/schema/, fed requests drawn from its own schemas and hostile inputs (see
 * requests.ts): no answer is a 5xx, every 4xx is problem+json with `code` and `detail`, and every
 * answer matches the document for its status and content type (TestApp.inject checks that).
 * `npm test` runs FUZZ_RUNS (default 2,000) with a fixed seed; `npm run fuzz` runs 20,000.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

describe('fuzzing every operation of the OpenAPI document', () => {
  let t: TestApp;
  let org: TestOrg;
  let token: string;
  let apiKey: string;
  let ops: Operation[];
  let doc: Record<string, any>;
  const known: Record<string, string[]> = {};

  beforeAll(async () => {
    // The fuzzer may change the plan (PATCH /organization/): no plan's limit is reached, so it stays past the limiter.
    t = await buildTestApp({ THREATMON_PLAN_LIMITS: 'starter=100000000,professional=100000000,enterprise=100000000' });
    org = await t.createOrg('enterprise', 'fuzz', true);
    token = await t.token(org.owner);
    const as = (method: string, url: string, payload?: unknown) => t.as(org.owner, { method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });
    // Records the fuzzer can reach by id, so that paths name real ones as well as missing ones.
    const analyst = await t.createUser(org, 'analyst', 'fuzz-analyst');
    const incident = JSON.parse((await as('POST', '/api/v1/incidents/', { title: 'fuzz', iocs: [{ type: 'domain', value: 'evil.example' }] })).body);
    const iocs = JSON.parse((await as('GET', `/api/v1/incidents/${incident.id}/iocs/`)).body).results;
    const source = JSON.parse((await as('POST', '/api/v1/leaks/sources/', { name: 'fuzz source' })).body);
    await as('POST', `/api/v1/leaks/sources/${source.id}/records/`, [{ email: 'a@fuzz.example', password: 'fuzzing password 1' }, { username: 'fuzzer', ip: '203.0.113.9' }]);
    const records = JSON.parse((await as('GET', '/api/v1/leaks/search/?domain=fuzz.example')).body).results;
    const saved = JSON.parse((await as('POST', '/api/v1/leaks/saved-searches/', { name: 'fuzz', query: { domain: 'fuzz.example' } })).body);
    known.id = [incident.id, source.id, saved.id, analyst.id, records[0]?.id].filter(Boolean);
    known.iocId = iocs.map((i: { id: string }) => i.id);
    known.prefix = ['0BEEC', 'FFFFF', '00000'];
    known.account = ['a@fuzz.example', 'fuzzer', 'nobody@fuzz.example'];
    known.domain = ['fuzz.example', 'other.example'];
    known.email = ['a@fuzz.example'];
    known.name = ['fuzz source'];
    // The Have I Been Pwned surface takes API keys, in its own header.
    apiKey = JSON.parse((await as('POST', '/api/v1/auth/api-keys/', { name: 'fuzz' })).body).key;
    doc = JSON.parse((await t.inject({ method: 'GET', url: '/api/schema/' })).body);
    ops = operationsOf(doc as never);
  });
  afterAll(() => t.close());

  let sent = 0;
  const byStatus = new Map<number, number>();
  // Drawn once the document is read (beforeAll): an operation, then a request for it.
  const request = fc.nat({ max: 1_000_000 }).chain((i) => requestFor(ops[i % ops.length] as Operation, doc, known));

  itProp.prop([request], { seed: SEED, numRuns: RUNS, endOnFailure: true })(
    `answers ${RUNS} requests without a 5xx, each as documented`,
    async (r: FuzzRequest) => {
      const hibp = r.url.startsWith('/hibp/');
      const credential = hibp ? { 'hibp-api-key': apiKey, 'user-agent': 'fuzz' } : { authorization: `Bearer ${token}` };
      const headers = { ...r.headers, ...(r.auth === 'token' ? credential : r.auth === 'garbage' ? { authorization: 'Bearer x.y.z' } : {}) };
      const res = await t.inject({ method: r.method as 'GET', url: r.url, headers, ...(r.payload !== undefined ? { payload: r.payload } : {}) });
      sent++;
      byStatus.set(res.statusCode, (byStatus.get(res.statusCode) ?? 0) + 1);
      expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
      if (hibp && res.statusCode >= 400) {
        // Have I Been Pwned's answers: no body for 400 and 404, else {statusCode, message}.
        if (res.body !== '' && String(res.headers['content-type']).includes('json')) expect(JSON.parse(res.body)).toEqual({ statusCode: res.statusCode, message: expect.any(String) });
        else if (res.statusCode !== 400 && res.statusCode !== 404) expect.fail(`${r.url} answered ${res.statusCode} without Have I Been Pwned's error body`);
        // (A 400 of the password range says why in text, as Have I Been Pwned's does.)
      } else if (new URL(r.url, 'http://localhost').pathname.startsWith('/taxii2/') && res.statusCode >= 400 && r.method !== 'HEAD') {
        // TAXII's error message, in its media type.
        expect(res.headers['content-type']).toBe('application/taxii+json;version=2.1');
        expect(JSON.parse(res.body)).toMatchObject({ title: expect.any(String), http_status: String(res.statusCode) });
      } else if (res.statusCode >= 400 && r.method !== 'HEAD') {
        expect(res.headers['content-type']).toContain('application/problem+json');
        const p = JSON.parse(res.body);
        expect(typeof p.code).toBe('string');
        expect(typeof p.detail).toBe('string');
      }
    },
    3_600_000,
  );

  it('sent every request, and they reached past validation as well as being refused', () => {
    expect(sent).toBe(RUNS);
    expect([...byStatus.keys()].some((s) => s < 300)).toBe(true);
    expect([...byStatus.keys()].some((s) => s >= 400)).toBe(true);
    if (process.env.FUZZ_REPORT) console.log(`fuzz: ${sent} requests, seed ${SEED}, by status: ${JSON.stringify(Object.fromEntries([...byStatus].sort((a, b) => a[0] - b[0])))}`);
  });
});
