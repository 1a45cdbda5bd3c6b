import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { COPY_FROM_RECORDS, DIRECT_COPY_PAUSE } from '../../src/modules/leaks/leaks.repository.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp, type TestTeam } from '../helpers/build-app.js';

/**
 * PostgreSQL writes a batch of COPY_FROM_RECORDS records or more with COPY (straight into
 * leak_records, or through a temporary table once a key is met again), a smaller one with INSERTs:
 * the same input stored either way gives the same records, duplicates, alerts and tracking-token exposures.
 */
describe.skipIf(!TEST_PG_URL)('COPY ingest against row-by-row ingest (PostgreSQL)', () => {
  let t: TestApp;
  let staff: User;
  let team: TestTeam;
  let token: { username: string; api_key: string };

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'copy-platform', true)).owner;
    team = await t.createTeam('enterprise', 'copy-watchers', 'copy');
    expect((await t.as(team.members.analyst, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Copy domain', type: 'domain', terms: ['watched.copy.example'] } })).statusCode).toBe(201);
    const cred = json(await t.as(team.members.analyst, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'Copy canary', kind: 'credential', username: 'copy.canary' } }));
    const key = json(await t.as(team.members.analyst, { method: 'POST', url: '/api/v1/tracking-tokens/', payload: { name: 'Copy key', kind: 'api_key' } }));
    token = { username: cred.username, api_key: key.api_key };
  });
  afterAll(() => t.close());

  /** 300 records: duplicates inside the input, characters COPY's text format escapes, monitored domains, planted tokens. */
  const input = () =>
    Array.from({ length: 300 }, (_, i) => {
      const j = i % 280; // the last 20 repeat earlier ones
      return {
        email: `user${j}@${j % 7 === 0 ? 'mail.watched.copy.example' : 'elsewhere.copy.example'}`,
        ...(j % 5 === 0 && { password: `Tab\there\\back${j}` }),
        ...(j % 11 === 0 && { username: j % 22 === 0 ? token.username : `login${j}` }),
        ...(j % 13 === 0 && { extra: { note: `line one\nline two\r\n${j === 13 ? token.api_key : 'nothing'}`, quote: 'it\'s "quoted"' } }),
        ...(j % 3 === 0 && { full_name: `Zoë Ünïcode ${j}` }),
        ...(j % 4 === 0 && { ip: `203.0.113.${j % 250}` }),
        leaked_at: '2025-03-04T05:06:07.000Z',
      };
    }).map((value, index) => ({ index, value }));

  const source = async (name: string) => json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name } })).id as string;
  const stored = async (id: string) => {
    const page = json(await t.as(staff, { method: 'GET', url: `/api/v1/leaks/search/?source=${id}&page_size=500&ordering=created_at` }));
    return (page.results as Array<Record<string, unknown>>)
      .map(({ id: _id, created_at: _at, source: _s, ...rest }) => JSON.stringify(rest))
      .sort();
  };
  const alerts = async (sourceName: string) =>
    (json(await t.as(team.members.analyst, { method: 'GET', url: '/api/v1/monitoring/alerts/?page_size=500' })).results as Array<{ leak_record: { source: { name: string } } }>).filter(
      (a) => a.leak_record.source.name === sourceName,
    ).length;

  it('stores the same records, duplicates, alerts and exposures, and skips the same keys when sent again', async () => {
    expect(COPY_FROM_RECORDS).toBeGreaterThan(40);
    const actor = { p: null, ip: null };
    const copied = await source('By COPY');
    const rows = await source('By rows');
    const byCopy = await t.services.leaks.ingest(copied, input(), actor, { batchSize: 1000 });
    const byRows = await t.services.leaks.ingest(rows, input(), actor, { batchSize: 40 });
    expect(byCopy).toEqual(byRows);
    expect(byCopy).toMatchObject({ accepted: 280, duplicates: 20, rejected: [] });
    expect(byCopy.alerts_raised).toBe(40);
    expect(byCopy.exposures_found).toBe(14); // 13 records with the canary login, one with the key
    expect(await stored(copied)).toEqual(await stored(rows));
    expect((await stored(copied)).some((r) => r.includes('line one\\nline two'))).toBe(true);
    expect(await alerts('By COPY')).toBe(40);
    expect(await alerts('By rows')).toBe(40);

    // Sent again (and the other way round): every key is already stored.
    const again = await t.services.leaks.ingest(copied, input(), actor, { batchSize: 40 });
    const againCopy = await t.services.leaks.ingest(rows, input(), actor, { batchSize: 1000 });
    expect(again).toMatchObject({ accepted: 0, duplicates: 300, alerts_raised: 0, exposures_found: 0 });
    expect(againCopy).toEqual(again);
  });

  it('COPYs new records straight in; a batch meeting a stored key leaves nothing of that COPY and goes through the temporary table, as the next batches of its source do', async () => {
    const actor = { p: null, ip: null };
    const id = await source('Straight in');
    const copies: string[] = [];
    const database = t.app.deps.database;
    const real = database.copyFrom!.bind(database);
    const watched = vi.spyOn(database, 'copyFrom').mockImplementation((...args) => {
      copies.push(args[1].replace(/ \(.*/, ''));
      return real(...args);
    });
    try {
      const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ index: i, value: { email: `straight${from + i}@copy.example` } }));
      // New records, some repeated inside the batch: one COPY into the table itself.
      const first = await t.services.leaks.ingest(id, [...records(0, 150), ...records(0, 10)].map((r, index) => ({ ...r, index })), actor, { batchSize: 1000 });
      expect(first).toMatchObject({ accepted: 150, duplicates: 10 });
      expect(copies).toEqual(['copy leak_records']);
      // 150 new and one stored: the COPY into the table fails on the stored key and keeps nothing; the batch goes in through the temporary table.
      copies.length = 0;
      const mixed = await t.services.leaks.ingest(id, [...records(150, 150), ...records(0, 1)].map((r, index) => ({ ...r, index })), actor, { batchSize: 1000 });
      expect(mixed).toMatchObject({ accepted: 150, duplicates: 1 });
      expect(copies).toEqual(['copy leak_records', 'copy leak_records_incoming']);
      // The next batches of that source go straight through the temporary table; then the table is tried again.
      copies.length = 0;
      for (let b = 0; b <= DIRECT_COPY_PAUSE; b++) await t.services.leaks.ingest(id, records(1000 + b * 100, 100), actor, { batchSize: 1000 });
      expect(copies).toEqual([...Array<string>(DIRECT_COPY_PAUSE).fill('copy leak_records_incoming'), 'copy leak_records']);
      expect(await t.db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number>().as('n')).where('source_id', '=', id).executeTakeFirstOrThrow()).toEqual({ n: 300 + (DIRECT_COPY_PAUSE + 1) * 100 });
    } finally {
      watched.mockRestore();
    }
  });

  it('hands out ids in the order of the records\' keys, the order rows go in, by COPY and by INSERT', async () => {
    const actor = { p: null, ip: null };
    // Stored records in id order fall into runs of ascending keys: one a batch (one batch of 300
    // by COPY, eight of 40 by INSERT), so the primary key grows at its right edge. Ids handed out
    // in input order would make a new run at about every other record.
    for (const [name, batchSize, batches] of [['Ids by COPY', 1000, 1], ['Ids by rows', 40, 8]] as const) {
      const id = await source(name);
      await t.services.leaks.ingest(id, input(), actor, { batchSize });
      const rows = await t.db.selectFrom('leak_records').select('fingerprint').where('source_id', '=', id).orderBy('id').execute();
      expect(rows).toHaveLength(280);
      const runs = 1 + rows.filter((r, i) => i > 0 && Buffer.compare(rows[i - 1]!.fingerprint, r.fingerprint) > 0).length;
      expect(runs).toBeGreaterThanOrEqual(1);
      expect(runs).toBeLessThanOrEqual(batches);
    }
  });
});
