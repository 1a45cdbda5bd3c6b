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
});
