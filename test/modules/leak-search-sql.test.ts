import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';

/**
 * The statements each kind of leak search runs, per dialect, held to files checked in beside this
 * test (test/sql/): a change to a planner-sensitive statement shows in review as a change of those
 * files. After a deliberate change: `npx vitest run test/modules/leak-search-sql.test.ts -u` (and
 * with THREATMON_TEST_PG_URL set, for PostgreSQL's), then read the diff.
 */
const SEARCHES = [
  'email=alice@corp.example',
  'username=darkstar',
  'phone=%2B12025550123',
  'ip=203.0.113.9',
  'ip=203.0.113.0/24',
  'domain=corp.example',
  'domain=corp.example&exact_domain=true',
  'domain=corp.example&has_password=true',
  'domain=corp.example&leaked_after=2024-01-01',
  'source={source}',
  'q=robinson',
  'q=%22jennifer%20smith%22',
  'q=robin*',
  'q=robinson&severity=high,critical',
  'q=robinson&ordering=created_at',
  'email=alice@corp.example&exact_count=true',
];

describe(`the leak search's statements (${TEST_PG_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  let t: TestApp;
  let staff: User;
  let source: string;
  let capturing = false;
  const statements: string[] = [];

  beforeAll(async () => {
    t = await buildTestApp({}, { queryLog: (text) => capturing && statements.push(text) });
    staff = (await t.createOrg('enterprise', 'sql-snapshots', true)).owner;
    source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Snapshot dump' } })).id;
    const records = [
      { email: 'alice@corp.example', password: 'hunter2hunter2', full_name: 'Jennifer Smith', leaked_at: '2024-05-01T00:00:00Z' },
      { email: 'bob@mail.corp.example', ip: '203.0.113.9', full_name: 'Robin Robinson' },
      { username: 'darkstar', phone: '+1 202 555 0123', full_name: 'Dark Robinson' },
      { email: 'carol@elsewhere.example', ip: '203.0.113.77' },
    ];
    expect(json(await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: records })).accepted).toBe(4);
  });
  afterAll(() => t.close());

  it('runs the statements checked in for its dialect', async () => {
    const lines: string[] = [];
    for (const search of SEARCHES) {
      statements.length = 0;
      capturing = true;
      const res = await t.as(staff, { method: 'GET', url: `/api/v1/leaks/search/?${search.replace('{source}', source)}` });
      capturing = false;
      expect(res.statusCode, `${search}: ${res.body}`).toBe(200);
      lines.push(`-- ${search.replace('{source}', '<source>')}`);
      const seen = new Set<string>();
      for (const s of statements) {
        const text = s.replace(/\s+/g, ' ').trim();
        if (!/\bleak_(records|words|domain_counts|counters|sources)\b/.test(text) || seen.has(text)) continue;
        seen.add(text);
        lines.push(`${text};`);
      }
      lines.push('');
    }
    await expect(lines.join('\n')).toMatchFileSnapshot(`../sql/leak-search.${TEST_PG_URL ? 'postgres' : 'sqlite'}.sql`);
  });
});
