import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, type TestOrg } from '../helpers/build-app.js';

describe('the access log', () => {
  let t: TestApp;
  let org: TestOrg;
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_LOG_LEVEL: 'info' }, { logger: undefined, logStream: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    org = await t.createOrg('starter', 'logged');
  });
  afterAll(() => t.close());

  it('writes one line per request: method, path, status, time, request id and organization, and no credentials', async () => {
    lines.length = 0;
    const res = await t.as(org.owner, { method: 'GET', url: '/api/v1/incidents/?page_size=5' });
    const access = lines.filter((l) => l.msg === 'request');
    expect(lines.filter((l) => l.reqId === res.headers['x-request-id'])).toHaveLength(1);
    expect(access).toEqual([expect.objectContaining({ method: 'GET', url: '/api/v1/incidents/?page_size=5', status: 200, ms: expect.any(Number), org: org.id, reqId: res.headers['x-request-id'] })]);
    expect(JSON.stringify(lines)).not.toMatch(/Bearer|authorization/i);
    lines.length = 0;
    await t.inject({ method: 'GET', url: '/api/v1/incidents/' });
    expect(lines.filter((l) => l.msg === 'request')).toEqual([expect.objectContaining({ status: 401 })]);
    expect(lines.filter((l) => l.msg === 'request')[0]).not.toHaveProperty('org');
  });

  it('redacts credentials a client puts in the query string or in key headers, in every line', async () => {
    lines.length = 0;
    const secrets = ['tok-SECRET-1', 'key-SECRET-2', 'pw-SECRET-3', 'hdr-SECRET-4', 'hibp-SECRET-5', 'sig-SECRET-6'];
    const res = await t.as(org.owner, {
      method: 'GET',
      url: `/api/v1/incidents/?access_token=${secrets[0]}&key=${secrets[1]}&page_size=5&Password=${secrets[2]}&X-Amz-Signature=${secrets[5]}`,
      headers: { 'x-api-key': secrets[3], 'hibp-api-key': secrets[4] },
    });
    expect(res.statusCode).toBe(200);
    // A 404 and a 401 are logged the same way.
    await t.inject({ method: 'GET', url: `/api/v1/nothing/?token=${secrets[0]}`, headers: { 'x-api-key': secrets[3] } });
    const text = JSON.stringify(lines);
    for (const s of secrets) expect(text).not.toContain(s);
    const access = lines.filter((l) => l.msg === 'request');
    expect(access[0]?.url).toBe('/api/v1/incidents/?access_token=[redacted]&key=[redacted]&page_size=5&Password=[redacted]&X-Amz-Signature=[redacted]');
    expect(access[1]?.url).toBe('/api/v1/nothing/?token=[redacted]');
  });

  it('redacts JWTs, refresh and access tokens, codes and parameters after a semicolon', async () => {
    lines.length = 0;
    const names = ['jwt', 'refresh', 'access', 'bearer', 'code'];
    await t.inject({ method: 'GET', url: `/api/v1/incidents/?${names.map((n) => `${n}=${n}-SECRET`).join('&')}&page=1;token=semi-SECRET;page_size=5` });
    const access = lines.filter((l) => l.msg === 'request');
    expect(access[0]?.url).toBe(`/api/v1/incidents/?${names.map((n) => `${n}=[redacted]`).join('&')}&page=1;token=[redacted];page_size=5`);
    expect(JSON.stringify(lines)).not.toContain('SECRET');
  });

  it("logs a tracking token's trigger key only by its first characters", async () => {
    const made = await t.as(org.owner, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'logged', kind: 'web_bug' } });
    expect(made.statusCode, made.body).toBe(201);
    const key = new URL(JSON.parse(made.body).trigger_url as string).pathname.split('/')[2] as string;
    expect(key.length).toBeGreaterThan(12);
    lines.length = 0;
    await t.inject({ method: 'GET', url: `/t/${key}/pixel.gif?utm=1` });
    const access = lines.filter((l) => l.msg === 'request');
    expect(access[0]?.url).toBe(`/t/${key.slice(0, 6)}[redacted]/pixel.gif?utm=1`);
    expect(JSON.stringify(lines)).not.toContain(key);
  });
});
