import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/**
 * A leak search counts its matches up to THREATMON_SEARCH_COUNT_LIMIT (here 5) or its page's end,
 * whichever is further; past that, count_exact is false and count a lower bound.
 */
describe('leak search counts', () => {
  let t: TestApp;
  let staff: User;
  let viewer: User;
  let sourceId: string;

  const search = async (qs: string, expected = 200) => {
    const res = await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/search/?${qs}` });
    expect(res.statusCode, res.body).toBe(expected);
    return json(res);
  };

  beforeAll(async () => {
    t = await buildTestApp({ THREATMON_SEARCH_COUNT_LIMIT: '5' });
    staff = (await t.createOrg('enterprise', 'platform', true)).owner;
    const org = await t.createOrg('enterprise', 'customer');
    viewer = await t.createUser(org, 'analyst', 'cust-analyst');
    const res = await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Twelve records' } });
    sourceId = json(res).id;
    // 12 records, one per ingest so that created_at orders them; the first 3 with a password.
    for (let i = 0; i < 12; i++) {
      const record = { email: `user${i}@count.example`, full_name: 'Counted Person', ...(i < 3 ? { password: `secret-${i}-xyz` } : {}) };
      expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${sourceId}/records/`, payload: [record] })).accepted).toBe(1);
      t.clock.advance(1);
    }
  });
  afterAll(() => t.close());

  it('stops counting past the limit, says so, and still links the next page', async () => {
    const page = await search(`source=${sourceId}&page_size=2`);
    expect(page).toMatchObject({ count: 5, count_exact: false, previous: null });
    expect(page.next).toContain('page=2');
    expect(page.results.map((r: { email: string }) => r.email)).toEqual(['user11@count.example', 'user10@count.example']);
    // A search under the limit is exact.
    expect(await search(`source=${sourceId}&has_password=true`)).toMatchObject({ count: 3, count_exact: true, next: null });
  });

  it('counts every match with exact_count=true', async () => {
    expect(await search(`source=${sourceId}&page_size=2&exact_count=true`)).toMatchObject({ count: 12, count_exact: true });
    const bad = await search(`source=${sourceId}&exact_count=maybe`, 400);
    expect(bad.code).toBe('invalid_query');
  });

  it('counts at least to the end of the page asked for, and pages through every record once', async () => {
    // Page 2 of 4 ends at the 8th match: counted to 9, so 8 and more.
    expect(await search(`source=${sourceId}&page_size=4&page=2`)).toMatchObject({ count: 8, count_exact: false });
    // Page 3 of 4 ends at the 12th, the last: exact, no next page; page 4 is past the end.
    expect(await search(`source=${sourceId}&page_size=4&page=3`)).toMatchObject({ count: 12, count_exact: true, next: null });
    await search(`source=${sourceId}&page_size=4&page=4`, 404);
    const seen: string[] = [];
    let url: string | null = `/api/v1/leaks/search/?source=${sourceId}&page_size=5`;
    while (url) {
      const res = await t.as(viewer, { method: 'GET', url: url.replace(/^https?:\/\/[^/]+/, '') });
      const page = json(res);
      seen.push(...page.results.map((r: { email: string }) => r.email));
      url = page.next;
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `user${11 - i}@count.example`));
  });

  it('counts exactly what it counts from counters (a domain alone) or in the pass that matches (full text)', async () => {
    expect(await search('domain=count.example&page_size=2')).toMatchObject({ count: 12, count_exact: true });
    expect(await search('q=counted%20person&page_size=2')).toMatchObject({ count: 12, count_exact: true });
    // The same domain with another filter counts its matches: capped.
    expect(await search('domain=count.example&has_password=false&page_size=2')).toMatchObject({ count: 5, count_exact: false });
  });

  it('reads a domain in order through its filters: the right records, pages and empty answers', async () => {
    const emails = (page: { results: Array<{ email: string }> }) => page.results.map((r) => r.email);
    const first = await search('domain=count.example&has_password=true&page_size=2');
    expect(first).toMatchObject({ count: 3, count_exact: true, previous: null });
    expect(emails(first)).toEqual(['user2@count.example', 'user1@count.example']);
    const second = await search('domain=count.example&has_password=true&page_size=2&page=2');
    expect(second).toMatchObject({ count: 3, count_exact: true, next: null });
    expect(emails(second)).toEqual(['user0@count.example']);
    await search('domain=count.example&has_password=true&page_size=2&page=3', 404);
    expect(emails(await search('domain=count.example&has_password=true&ordering=created_at&page_size=2'))).toEqual(['user0@count.example', 'user1@count.example']);
    expect(await search('domain=count.example&leaked_after=2999-01-01')).toMatchObject({ count: 0, count_exact: true, results: [] });
    expect(await search('domain=count.example&has_password=false&exact_count=true&page_size=2')).toMatchObject({ count: 9, count_exact: true });
  });

  it('runs a saved search with the same rule and records the count it gave', async () => {
    const created = json(await t.as(viewer, { method: 'POST', url: '/api/v1/leaks/saved-searches/', payload: { name: 'all twelve', query: { source: sourceId } } }));
    const run = json(await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/saved-searches/${created.id}/results/?page_size=2` }));
    expect(run).toMatchObject({ count: 5, count_exact: false });
    expect(json(await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/saved-searches/${created.id}/` })).last_result_count).toBe(5);
    await t.as(viewer, { method: 'PATCH', url: `/api/v1/leaks/saved-searches/${created.id}/`, payload: { query: { source: sourceId, exact_count: true } } });
    expect(json(await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/saved-searches/${created.id}/results/` }))).toMatchObject({ count: 12, count_exact: true });
  });
});
