import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';
import { leakRecordForeignKeys } from '../helpers/pg-catalog.js';

/**
 * A source deleted while an ingest into it is open (PostgreSQL): the deletion waits for the
 * ingest's commit and removes what it stored with its counter changes, with the records' foreign
 * key in place and while a bulk load has it set aside (see leaks.bulk-load-pg.ts).
 */
describe('deleting a leak source during an ingest', () => {
  let t: TestApp;
  let staff: User;
  const createSource = async (name: string) => json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name } })).id as string;
  const ingest = (id: string, records: object[]) => t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${id}/records/`, payload: records });
  const foreignKeys = () => leakRecordForeignKeys(t.db);

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'doomed-platform', true)).owner;
  });
  afterAll(() => t.close());

  for (const bulk of [false, true]) {
    it.skipIf(!TEST_PG_URL)(`PostgreSQL${bulk ? ', in a bulk load (the foreign key set aside)' : ''}: deleting a source while an ingest into it is open waits for it and removes what it stored, counters too; an ingest after is refused`, async () => {
      const leaks = t.services.leaks;
      const counters = async () =>
        (await sql<{ key: string; n: string }>`select key, n::text as n from leak_counters where n <> 0 union all select 'domain ' || key, n::text from leak_domain_counts where n <> 0 order by 1`.execute(t.db)).rows;
      const before = await counters();
      if (bulk) {
        await leaks.bulk.begin();
        expect(await foreignKeys()).toEqual([]);
      }
      const doomed = await createSource(`PG doomed ${bulk}`);
      expect(json(await ingest(doomed, [{ email: 'first@doomed.example', password: 'Doomed-1' }, { email: 'second@doomed.example' }])).accepted).toBe(2);
      let deleting: ReturnType<TestApp['as']> | undefined;
      const off = t.services.hooks.on('leaks.ingested', async (trx) => {
        // The deletion starts while this batch is stored and not committed, and is let wait for it:
        // until a backend is blocked by this transaction's own (another test's waits do not count).
        deleting ??= t.as(staff, { method: 'DELETE', url: `/api/v1/leaks/sources/${doomed}/` });
        const { rows: me } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        for (;;) {
          const { rows } = await sql<{ waiting: boolean }>`select exists (select 1 from pg_stat_activity where ${me[0]?.pid}::int = any(pg_blocking_pids(pid))) as waiting`.execute(t.db);
          if (rows[0]?.waiting) break;
        }
        return { alerts: 0, exposures: 0 };
      });
      try {
        const late = ['third', 'fourth', 'fifth'].map((name, index) => ({ index, value: { email: `${name}@doomed.example`, password: `Doomed-${name}`, ip: '203.0.113.7' } }));
        expect(await leaks.ingest(doomed, late, { p: null, ip: null })).toMatchObject({ accepted: 3 });
      } finally {
        off();
      }
      expect((await deleting)?.statusCode).toBe(204);
      expect((await sql`select 1 from leak_records where source_id = ${doomed}`.execute(t.db)).rows).toEqual([]);
      expect(await counters()).toEqual(before);
      expect((await ingest(doomed, [{ email: 'after@doomed.example' }])).statusCode).toBe(404);
      if (bulk) {
        const steps: string[] = [];
        expect(await leaks.bulk.end((step) => steps.push(step))).toBe('rebuilt');
        expect(steps).toContain('foreign key leak_records_source_id_fkey');
      }
      expect(await foreignKeys()).toEqual([{ name: 'leak_records_source_id_fkey', valid: true }]);
    });
  }
});
