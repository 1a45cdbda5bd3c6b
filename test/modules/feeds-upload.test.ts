import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp, type TestTeam } from '../helpers/build-app.js';

const bundle = (patterns: string[]) => ({
  type: 'bundle',
  id: 'bundle--00000000-0000-4000-8000-0000000000b0',
  objects: patterns.map((pattern, i) => ({ type: 'indicator', spec_version: '2.1', id: `indicator--00000000-0000-4000-8000-00000000010${i}`, created: '2026-11-01T00:00:00.000Z', modified: '2026-11-01T00:00:00.000Z', pattern, pattern_type: 'stix', valid_from: '2026-11-01T00:00:00Z' })),
});

describe('a stix feed given its bundles by upload', () => {
  let t: TestApp;
  let team: TestTeam;
  const as = (role: keyof TestTeam['tokens'], method: string, url: string, payload?: unknown, who = team) =>
    t.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${who.tokens[role]}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    team = await t.createTeam('enterprise', 'upload');
  });
  afterAll(() => t.close());

  it('takes a stix feed without a URL (never pulled), applies an uploaded bundle at once, and refuses what is not one', async () => {
    const created = await as('admin', 'POST', '/api/v1/feeds/', { name: 'Analyst drops', kind: 'stix' });
    expect(created.statusCode).toBe(201);
    const feed = json(created);
    expect(feed.url).toBeNull();
    expect(await t.services.feeds.puller.pullDue()).toBe(0);
    const upload = (payload: unknown, role: keyof TestTeam['tokens'] = 'admin', who = team) => as(role, 'POST', `/api/v1/feeds/${feed.id}/upload/`, payload, who);
    const done = await upload(bundle(["[ipv4-addr:value = '203.0.113.61']", "[domain-name:value = 'drop.example']", 'not a pattern']));
    expect(done.statusCode).toBe(200);
    expect(json(done)).toMatchObject({ status: 'healthy', objects_read: 3, indicators_added: 2, rejected: 1 });
    const values = (json(await as('analyst', 'GET', `/api/v1/indicators/?feed=${feed.id}&ordering=value`)).results as Array<{ value: string }>).map((i) => i.value);
    expect(values).toEqual(['203.0.113.61', 'drop.example']);
    expect(json(await as('admin', 'GET', '/api/v1/audit-log/?action=feed.uploaded')).results[0].changes).toMatchObject({ added: 2, rejected: 1 });

    // Refused, and nothing changes.
    expect((await upload({ type: 'not-a-bundle', objects: [] })).statusCode).toBe(400);
    expect((await upload(bundle(["[ipv4-addr:value = '203.0.113.62']"]), 'analyst')).statusCode).toBe(403);
    const other = await t.createTeam('enterprise', 'upload-other');
    expect((await upload(bundle(["[ipv4-addr:value = '203.0.113.63']"]), 'admin', other)).statusCode).toBe(404);
    expect(json(await as('analyst', 'GET', `/api/v1/feeds/${feed.id}/`)).objects_read).toBe(3);

    const csv = json(await as('admin', 'POST', '/api/v1/feeds/', { name: 'List', kind: 'csv', url: 'http://127.0.0.1:9/list.txt', is_active: false }));
    const wrong = await as('admin', 'POST', `/api/v1/feeds/${csv.id}/upload/`, bundle([]));
    expect([wrong.statusCode, json(wrong).errors[0].field]).toEqual([400, 'kind']);
    const noUrl = await as('admin', 'POST', '/api/v1/feeds/', { name: 'x', kind: 'csv' });
    expect([noUrl.statusCode, json(noUrl).errors]).toEqual([400, [{ field: 'url', message: 'is required for csv feeds' }]]);
  });
});
