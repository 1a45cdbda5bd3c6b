import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { CreatedSpread, WordStats } from '../../src/modules/leaks/leaks.search-stats.js';
import { LeakSearches } from '../../src/modules/leaks/leaks.search.repository.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/**
 * A leak search counts its matches up to THREATMON_SEARCH_COUNT_LIMIT (here 5) or its page's end,
 * whichever is further; past that, count_exact is false and count a lower bound, or (PostgreSQL,
 * full text the statistics put past three times that) the estimate, with count_estimated.
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

  it('answers each search of one shape its own values (PostgreSQL reuses the shape\'s statement)', async () => {
    for (const i of [4, 7, 4, 0]) {
      const page = await search(`email=USER${i}%40count.example`);
      expect(page).toMatchObject({ count: 1, count_exact: true });
      expect(page.results.map((r: { email: string }) => r.email)).toEqual([`user${i}@count.example`]);
    }
    const emails = async (qs: string) => (await search(qs)).results.map((r: { email: string }) => r.email);
    expect(await emails(`source=${sourceId}&has_password=true&ordering=created_at`)).toEqual(['user0@count.example', 'user1@count.example', 'user2@count.example']);
    expect(await emails(`source=${sourceId}&has_password=true&ordering=-created_at&page_size=2&page=2`)).toEqual(['user0@count.example']);
    expect(await emails(`source=${sourceId}&has_password=false&ordering=created_at&page_size=2&page=2`)).toEqual(['user5@count.example', 'user6@count.example']);
    expect(await emails(`source=${sourceId}&has_password=false&ordering=created_at&page_size=3&page=2`)).toEqual(['user6@count.example', 'user7@count.example', 'user8@count.example']);
    await search(`source=00000000-0000-4000-8000-000000000000&has_password=false&ordering=created_at&page_size=3&page=2`, 404);
  });

  it('counts exactly what it counts from counters (a domain alone) or in the pass that matches (full text)', async () => {
    expect(await search('domain=count.example&page_size=2')).toMatchObject({ count: 12, count_exact: true });
    // Full text read in one pass (here with a second criterion): every match read, every match counted.
    expect(await search('q=counted%20person&domain=count.example&page_size=2')).toMatchObject({ count: 12, count_exact: true });
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

  it('reads the page of a word matching many records from the newest (or oldest) ones: the same page as reading them all', async () => {
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'A common word' } })).id;
    // 32 batches of 5 records, each batch one created_at: the word in the 12 oldest and in the 27th.
    for (let b = 0; b < 32; b++) {
      const words = b < 12 || b === 26 ? 'Zanzibar Common' : 'Other Person';
      const batch = Array.from({ length: 5 }, (_, i) => ({ username: `zw${b}x${i}`, full_name: words }));
      expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: batch })).accepted).toBe(5);
      t.clock.advance(1);
    }
    const pg = t.app.deps.database.dialect === 'postgres';
    // The planner's estimate and created_at's histogram, as a server's ANALYZE leaves them.
    if (pg) await sql`analyze leak_records`.execute(t.app.deps.database.db);
    for (const ordering of ['-created_at', 'created_at']) {
      // The reference: every match read and ordered in one pass (a second criterion rules the other plans out).
      const all = await search(`q=zanzibar&source=${source}&ordering=${ordering}&exact_count=true&page_size=100`);
      expect(all).toMatchObject({ count: 65, count_exact: true });
      const names = (p: { results: Array<{ username: string }> }) => p.results.map((r) => r.username);
      for (const [page, size] of [[1, 2], [2, 2], [3, 5], [7, 8], [9, 8]] as const) {
        const got = await search(`q=zanzibar&ordering=${ordering}&page=${page}&page_size=${size}`);
        expect(names(got), `page ${page} of ${size}, ${ordering}`).toEqual(names(all).slice((page - 1) * size, page * size));
      }
      // Page 1 of 2: more matches than the limit (5). PostgreSQL: the estimate (65) is over 3 times
      // the limit, so a slice (newest first, the first slices hold no match and are widened to the
      // 27th batch); SQLite: the created_at index walked. Either way the count stops.
      // PostgreSQL: with `q` alone the estimate comes from the full-text index's statistics, without EXPLAIN.
      // PostgreSQL: the count is that estimate, not counted (a count stopped at the limit would say 5).
      const explain = vi.spyOn(LeakSearches.prototype as unknown as { estimatedRows: () => Promise<number> }, 'estimatedRows');
      const first = await search(`q=zanzibar&ordering=${ordering}&page_size=2`);
      expect(first).toMatchObject(pg ? { count: 65, count_exact: false, count_estimated: true } : { count: 5, count_exact: false });
      if (!pg) expect(first).not.toHaveProperty('count_estimated');
      expect(explain).not.toHaveBeenCalled();
      explain.mockRestore();
      if (pg) {
        // An estimate far off: two significant figures of it, the page still right; a page past
        // the matches the slices hold is read in one pass and counted exactly.
        const guess = vi.spyOn(WordStats.prototype, 'estimate').mockReturnValue(123_456);
        const got = await search(`q=zanzibar&ordering=${ordering}&page=2&page_size=2`);
        expect(got).toMatchObject({ count: 120_000, count_exact: false, count_estimated: true });
        expect(names(got)).toEqual(names(all).slice(2, 4));
        const last = await search(`q=zanzibar&ordering=${ordering}&page=13&page_size=5`);
        expect(last).toMatchObject({ count: 65, count_exact: true, next: null });
        expect(last).not.toHaveProperty('count_estimated');
        expect(names(last)).toEqual(names(all).slice(60, 65));
        guess.mockRestore();
      }
      // The 7th page of 8 ends at the 56th match. PostgreSQL: under 3 times that, one pass reads and
      // counts them all; SQLite: the full-text index counts to 57, and the walk reads the page.
      expect(await search(`q=zanzibar&ordering=${ordering}&page=7&page_size=8`)).toMatchObject(pg ? { count: 65, count_exact: true } : { count: 56, count_exact: false });
      expect(await search(`q=zanzibar&ordering=${ordering}&page=9&page_size=8`)).toMatchObject({ count: 65, count_exact: true, next: null });
      // A phrase and a prefix take the same plans (PostgreSQL: the slice checks them in each record's words).
      for (const q of ['%22zanzibar%20common%22', 'zanzib*', 'common%20zanz*']) {
        for (const [page, size] of [[1, 2], [3, 5]] as const) {
          expect(names(await search(`q=${q}&ordering=${ordering}&page=${page}&page_size=${size}`)), `${q}, page ${page} of ${size}`).toEqual(names(all).slice((page - 1) * size, page * size));
        }
      }
      expect(await search(`q=%22common%20zanzibar%22&ordering=${ordering}&page_size=2`)).toMatchObject({ count: 0, results: [] });
      // PostgreSQL: the slice found both ways, its rows read and checked or the index's matches ANDed
      // with its blocks: the same pages, phrases and prefixes included.
      if (pg) {
        for (const scans of [true, false]) {
          const choice = vi.spyOn(LeakSearches, 'scansSlice').mockReturnValue(scans);
          for (const q of ['zanzibar', '%22zanzibar%20common%22', 'zanzib*']) {
            for (const [page, size] of [[1, 2], [2, 5]] as const) {
              const got = await search(`q=${q}&ordering=${ordering}&page=${page}&page_size=${size}`);
              expect(names(got), `${q}, page ${page} of ${size}, scans ${scans}`).toEqual(names(all).slice((page - 1) * size, page * size));
            }
          }
          expect(choice).toHaveBeenCalled();
          choice.mockRestore();
        }
      }
    }
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

describe('where a slice of the corpus is cut (CreatedSpread)', () => {
  // Two common values holding a quarter each; the other half in 3 buckets of a sixth: [0,5], [5,8], [8,30].
  const spread = new CreatedSpread([10, 20], [0.25, 0.25], [0, 5, 8, 30]);

  it('cuts at the newest value that leaves at least the share above it, a bucket taken as evenly spread', () => {
    // 20 holds a quarter, and (30 - 20) / 22 of the last bucket's sixth is above it: 0.326.
    expect(spread.cut(0.2, true)).toBe(20);
    expect(spread.cut(0.3, true)).toBe(20);
    expect(spread.cut(0.6, true)).toBe(10);
    // Past the common values: 0.5 + 1/6 + 1/6 leaves 0.0667 to take from [0, 5] (a sixth): 0.4 of it.
    expect(spread.cut(0.9, true)).toBeCloseTo(3, 6);
    // Inside the newest bucket: 0.05 of it is 3/10 of its sixth, 6.6 of its 22.
    expect(spread.cut(0.05, true)).toBeCloseTo(30 - 6.6, 6);
  });

  it('cuts from the oldest when ascending, and not at all when only the whole column holds the share', () => {
    expect(spread.cut(0.1, false)).toBeCloseTo(3, 6);
    expect(spread.cut(0.3, false)).toBeCloseTo(7.4, 6);
    expect(spread.cut(1, true)).toBeNull();
    expect(spread.cut(1, false)).toBeNull();
    expect(new CreatedSpread([], [], []).cut(0.1, true)).toBeNull();
    // Common values and no histogram: the newest one holding the share.
    expect(new CreatedSpread([7, 9], [0.5, 0.5], []).cut(0.1, true)).toBe(9);
    expect(new CreatedSpread([7, 9], [0.5, 0.5], []).cut(0.6, true)).toBeNull();
  });
});

describe("the planner's estimate of a full-text search, from its words' statistics (WordStats)", () => {
  // 1,000 records; smith in a tenth, john in a twentieth; the least common of them at 2%.
  const words = new WordStats(1000, ['smith', 'john'], [0.1, 0.05, 0.02, 0.1, 0]);

  it('multiplies the shares of words AND-ed, in a phrase too, and guesses a rare word as PostgreSQL does', () => {
    expect(words.estimate([{ kind: 'word', words: ['smith'] }])).toBeCloseTo(100);
    expect(words.estimate([{ kind: 'word', words: ['smith'] }, { kind: 'word', words: ['john'] }])).toBeCloseTo(5);
    // Not among the commonest: half the least common share, at most 0.5%.
    expect(words.estimate([{ kind: 'word', words: ['zanzibar'] }])).toBeCloseTo(5);
    expect(words.estimate([{ kind: 'phrase', words: ['john', 'smith'] }])).toBeCloseTo(5);
  });

  it("counts the posting-list entries a bitmap of the words reads, and scans a slice only while its rows cost less", () => {
    expect(words.postings([{ kind: 'word', words: ['smith'] }, { kind: 'word', words: ['john'] }])).toBeCloseTo(150);
    expect(words.postings([{ kind: 'phrase', words: ['john', 'smith'] }])).toBeCloseTo(150);
    expect(words.postings([{ kind: 'prefix', words: ['jo'], completions: ['john', 'joe'] }])).toBeCloseTo(55);
    // 10,000 rows against 1,000 matches and 60,000 entries (a row costs 6): scanned; twice the slice is not.
    expect(LeakSearches.scansSlice(0.01, 1_000_000, 1000, 60_000)).toBe(true);
    expect(LeakSearches.scansSlice(0.02, 1_000_000, 1000, 60_000)).toBe(false);
    expect(LeakSearches.scansSlice(0.01, 1_000_000, 1000, 0)).toBe(false);
  });

  it("ORs a spelled-out prefix's words, and leaves a prefix searched as one to the planner", () => {
    expect(words.estimate([{ kind: 'prefix', words: ['jo'], completions: ['john', 'joe'] }])).toBeCloseTo(1000 * (1 - 0.95 * 0.995));
    expect(words.estimate([{ kind: 'prefix', words: ['smith', 'jo'], completions: ['john'] }])).toBeCloseTo(5);
    expect(words.estimate([{ kind: 'word', words: ['smith'] }, { kind: 'prefix', words: ['jo'] }])).toBeUndefined();
  });
});
