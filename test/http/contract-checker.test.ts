import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractChecker } from '../helpers/contract.js';
import { buildTestApp, type TestApp, type TestOrg } from '../helpers/build-app.js';

/** The helper every route test's answers go through must itself catch what is off. */
describe('the OpenAPI contract checker', () => {
  let t: TestApp;
  let org: TestOrg;
  let checker: ContractChecker;

  beforeAll(async () => {
    t = await buildTestApp();
    org = await t.createOrg();
    checker = new ContractChecker(t.app.swagger() as never);
  });
  afterAll(() => t.close());

  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    ({
      statusCode: status,
      headers: { 'x-request-id': 'r', 'content-type': 'application/json; charset=utf-8', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      rawPayload: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
    }) as never;

  it('passes a real answer and finds each kind of departure in a doctored one', async () => {
    const real = await t.app.inject({ method: 'GET', url: '/api/v1/auth/me/', headers: { authorization: `Bearer ${await t.token(org.owner)}` } });
    expect(checker.check('GET', '/api/v1/auth/me/', real)).toEqual([]);
    const me = JSON.parse(real.body);
    const rl = { 'ratelimit-limit': '1', 'ratelimit-remaining': '1', 'ratelimit-reset': '1', 'ratelimit-policy': '1;w=60' };
    expect(checker.check('GET', '/api/v1/auth/me/', answer(418, me, rl))).toEqual([expect.stringContaining('status 418 is not documented')]);
    expect(checker.check('GET', '/api/v1/auth/me/', answer(200, { ...me, role: 'emperor' }, rl))[0]).toMatch(/body\/role/);
    expect(checker.check('GET', '/api/v1/auth/me/', answer(200, me, { ...rl, 'content-type': 'text/plain' }))[0]).toMatch(/content type text\/plain/);
    expect(checker.check('GET', '/api/v1/auth/me/', answer(200, me, { ...rl, etag: '"1"' }))).toEqual(['header etag sent but not documented']);
    expect(checker.check('GET', '/api/v1/auth/me/', answer(401, { type: 'about:blank' }))[0]).toMatch(/content type application\/json is not documented for 401/);
    expect(checker.check('GET', '/api/v1/nothing/', answer(200, {}))).toEqual(['undocumented operation answered 200']);
    expect(checker.check('GET', '/api/v1/users/0193e0a4-0000-7000-8000-000000000000/', answer(200, {}, rl))).toContain('documented header etag missing');
  });
});
