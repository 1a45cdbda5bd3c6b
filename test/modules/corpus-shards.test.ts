import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addShard } from '../../src/db/corpus-rebalance.js';
import { type CorpusShards, routeSlot, SLOTS } from '../../src/db/corpus-shards.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';
import { AUTOVACUUM_OFF } from '../helpers/pg-catalog.js';
import { type Replica, startServer } from '../helpers/pg-replica.js';
import { corpus, countingIds, recordsOnEach, rowsOnEach, unslotted } from '../helpers/shard-corpus.js';

/** Every record both corpora were given. */
const all = () => [7, 8, 9].flatMap((seed) => corpus(300, seed));

/**
 * The corpus spread over three PostgreSQL servers started here (THREATMON_CORPUS_SHARDS), beside
 * the same records in one database: every search answers the same records in the same order.
 */
describe.skipIf(!TEST_PG_URL)('corpus shards', () => {
  const servers: Replica[] = [];
  let sharded: TestApp;
  let single: TestApp;
  let staffSharded: User;
  let staffSingle: User;
  const sources: { sharded: string; single: string }[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startServer());
    // Counts stop past 40 matches: several searches below stop, on each shard and on one server.
    const counting = { THREATMON_SEARCH_COUNT_LIMIT: '40' };
    sharded = await buildTestApp({ ...counting, THREATMON_CORPUS_SHARDS: servers.map((s) => s.url).join(',') }, { newId: countingIds() });
    single = await buildTestApp(counting, { newId: countingIds() });
    staffSharded = (await sharded.createOrg('enterprise', 'shard-platform', true)).owner;
    staffSingle = (await single.createOrg('enterprise', 'shard-platform', true)).owner;
    for (let s = 0; s < 3; s++) {
      const ids = { sharded: '', single: '' };
      for (const [t, who, k] of [[sharded, staffSharded, 'sharded'], [single, staffSingle, 'single']] as const) {
        ids[k] = json(await t.as(who, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: `Shard source ${s}`, breach_date: '2024-01-01' } })).id;
      }
      sources.push(ids);
      const records = corpus(300, 7 + s);
      for (let b = 0; b < records.length; b += 100) {
        for (const [t, who, k] of [[sharded, staffSharded, 'sharded'], [single, staffSingle, 'single']] as const) {
          const res = await t.as(who, { method: 'POST', url: `/api/v1/leaks/sources/${ids[k]}/records/`, payload: records.slice(b, b + 100) });
          expect(res.statusCode).toBe(200);
          t.clock.advance(60);
        }
      }
    }
  }, 300_000);

  afterAll(async () => {
    await sharded?.close();
    await single?.close();
    for (const s of servers) s.remove();
  });

  const shardCounts = () => recordsOnEach(servers);

  it('spreads the records over the three servers, each holding its slots', async () => {
    const counts = await shardCounts();
    const total = Number(((await sharded.db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as { n: number }).n);
    const alone = Number(((await single.db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst()) as { n: number }).n);
    expect(total).toBe(alone);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(total);
    for (const c of counts) expect(c).toBeGreaterThan(total / 6);
    expect(sharded.app.deps.database.corpusShards?.shards.flatMap((s) => s.slots).sort()).toHaveLength(SLOTS);
  });

  it('answers every search with the same records in the same order as one server', async () => {
    // Values that occur, taken from the generated records: each search matches several.
    const pick = (field: string) => encodeURIComponent(String(all().find((r) => r[field] !== undefined)?.[field]));
    const searches = [
      `?email=${pick('email')}`,
      '?domain=corp1.example',
      '?domain=corp1.example&exact_domain=true',
      '?domain=corp2.example&has_password=true',
      `?username=${pick('username')}`,
      `?phone=${pick('phone')}`,
      `?ip=${pick('ip')}`,
      '?ip=10.1.0.0/16',
      '?ip=10.0.0.0/8&page=2&page_size=5',
      '?q=jennifer%20smith',
      '?q=%22maria%20garcia%22',
      '?q=rob*',
      '?q=chen&ordering=created_at',
      '?source=SOURCE&page_size=50&page=3',
      '?domain=shop.example&leaked_after=2024-03-01&ordering=leaked_at',
      '?q=linda&severity=high,critical&exact_count=true',
      '?source=SOURCE&has_password=true',
      '?source=SOURCE&has_password=true&exact_count=true&ordering=-leaked_at&page=2',
      '?domain=corp1.example&severity=high,critical&page=2&page_size=10',
    ];
    const stopped: string[] = [];
    for (const qs of searches) {
      const [a, b] = await Promise.all(
        [[sharded, staffSharded, 'sharded'], [single, staffSingle, 'single']].map(async ([t, who, k]) => {
          const res = await (t as TestApp).as(who as User, { method: 'GET', url: `/api/v1/leaks/search/${qs.replace('SOURCE', (sources[1] as Record<string, string>)[k as string] as string)}` });
          expect(res.statusCode, `${qs}: ${res.body}`).toBe(200);
          const body = json(res);
          const which = (r: { source: { id: string } }) => (r.source.id === (sources[1] as Record<string, string>)[k as string] ? 'one' : 'other');
          return {
            count: body.count,
            count_exact: body.count_exact,
            results: body.results.map((r: { id: string; source: { id: string; name: string } }) => ({ ...r, id: unslotted(r.id), source: { which: which(r), name: r.source.name } })),
          };
        }),
      );
      if (!a?.results.length || JSON.stringify(a) !== JSON.stringify(b)) console.log(qs, JSON.stringify(a).slice(0, 600), '\n', JSON.stringify(b).slice(0, 600));
      expect(a?.results.length, qs).toBeGreaterThan(0);
      expect(a, qs).toEqual(b);
      if (a?.count_exact === false) stopped.push(qs);
    }
    // Counts that stopped at the limit: added over the shards, they stop where one server's does.
    expect(stopped.length).toBeGreaterThanOrEqual(3);
  });

  it('answers a full-text search matching past the bound from the newest slice of every shard, its count estimated, as one server', async () => {
    // ANALYZE's statistics, as a bulk load leaves them: one server's, each shard's.
    await sql`analyze leak_records`.execute(single.db);
    await rowsOnEach(servers, 'analyze');
    const get = async (t: TestApp, who: User, qs: string) => {
      const res = await t.as(who, { method: 'GET', url: `/api/v1/leaks/search/${qs}` });
      expect(res.statusCode, res.body).toBe(200);
      return json(res);
    };
    // A word of nearly every record: past three times the bound by any estimate, so one server slices too.
    for (const q of ['example']) {
      const exact = (await get(single, staffSingle, `?q=${encodeURIComponent(q)}&exact_count=true`)).count as number;
      expect(exact, q).toBeGreaterThan(3 * 3 * 40);
      for (const qs of [`?q=${q}`, `?q=${q}&page=2&page_size=20`, `?q=${q}&ordering=created_at&page=3&page_size=10`]) {
        const [a, b] = [await get(sharded, staffSharded, qs), await get(single, staffSingle, qs)];
        // The same page; a count estimated on both, near the true one (each from its own statistics).
        expect(a.results.map((r: { id: string }) => unslotted(r.id)), qs).toEqual(b.results.map((r: { id: string }) => unslotted(r.id)));
        for (const found of [a, b]) {
          expect(found, qs).toMatchObject({ count_exact: false, count_estimated: true });
          expect(found.count, qs).toBeGreaterThan(exact / 3);
          expect(found.count, qs).toBeLessThan(exact * 3);
        }
      }
    }
  });

  it('reads a record by its id from the shard its id names', async () => {
    const res = json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp2.example&page_size=20' }));
    for (const r of res.results as { id: string; email: string }[]) {
      const one = await sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/records/${r.id}/` });
      expect(one.statusCode).toBe(200);
      expect(json(one).email).toBe(r.email);
    }
    // An id whose slot digit is changed names another shard's slot: not found there.
    const id = (res.results[0] as { id: string }).id;
    const other = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
    expect((await sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/records/${other}/` })).statusCode).toBe(404);
  });

  it('backfills monitors from every shard, and alerts show their records, as on one server', async () => {
    const cases = [
      { type: 'domain', terms: ['corp1.example'] },
      { type: 'email', terms: all().filter((r) => r.email).slice(0, 5).map((r) => r.email as string) },
      { type: 'username', terms: [String(all().find((r) => r.username)?.username)] },
      { type: 'ip', terms: ['10.2.0.0/16'] },
      { type: 'keyword', terms: ['olga'] },
    ];
    const alerts: Record<string, unknown[]> = {};
    for (const [t, who, k] of [[sharded, staffSharded, 'sharded'], [single, staffSingle, 'single']] as const) {
      const ids: string[] = [];
      for (const body of cases) {
        const res = await t.as(who, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: `Shards ${body.type}`, ...body } });
        expect(res.statusCode, res.body).toBe(201);
        ids.push(json(res).id);
      }
      expect(await t.services.monitoring.scans.runPending()).toBe(cases.length);
      alerts[k] = [];
      for (const id of ids) {
        const res = json(await t.as(who, { method: 'GET', url: `/api/v1/monitoring/${id}/alerts/?page_size=100` }));
        alerts[k]?.push(res.count, ...res.results.map((a: { leak_record: { id: string; source: { name: string } }; matched_term: string; matched_field: string }) => [unslotted(a.leak_record.id), a.leak_record.source.name, a.matched_term, a.matched_field]));
      }
    }
    expect((alerts.sharded as unknown[]).length).toBeGreaterThan(10);
    expect(alerts.sharded).toEqual(alerts.single);
  });

  it('a bulk load sets each shard\'s search indexes aside and builds them again on every shard at once', async () => {
    const indexes = async () =>
      (await rowsOnEach<{ name: string }>(servers, `select indexrelid::regclass::text as name from pg_index x join pg_class t on t.oid = x.indrelid where t.relname ~ '^leak_records_s' order by 1`)).map((rows) => rows.map((r) => r.name));
    // How many slot tables of each shard have autovacuum off (a load turns it off until it ends).
    const autovacuumOff = async () => (await rowsOnEach(servers, AUTOVACUUM_OFF)).map((rows) => rows.length);
    const before = await indexes();
    for (const list of before) expect(list.length).toBeGreaterThan(20);
    const bulk = sharded.services.leaks.bulk;
    await bulk.begin();
    // Left on each shard: the keys' indexes only (primary key and record key, for each slot table).
    const during = await indexes();
    during.forEach((list, i) => expect(list).toHaveLength(((sharded.app.deps.database.corpusShards?.shards[i]?.slots.length ?? 0) * 2)));
    expect(await autovacuumOff()).toEqual(sharded.app.deps.database.corpusShards?.shards.map((s) => s.slots.length));
    const batch = [{ email: 'bulk.one@shardbulk.example', full_name: 'Bulky One' }, { email: 'bulk.two@shardbulk.example', full_name: 'Bulky Two' }];
    expect(json(await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: batch })).accepted).toBe(2);
    const steps: string[] = [];
    expect(await bulk.end((step) => steps.push(step))).toBe('rebuilt');
    expect(steps.filter((s) => s.startsWith('shard 2: index '))).toHaveLength((before[2]?.length ?? 0) - (during[2]?.length ?? 0));
    expect(await indexes()).toEqual(before);
    expect(await autovacuumOff()).toEqual([0, 0, 0]);
    const found = json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?q=bulky' }));
    expect(found.count).toBe(2);
  });

  it('skips a repeated record on whichever shard holds it', async () => {
    const before = await shardCounts();
    const again = corpus(300, 7).slice(0, 100);
    const res = json(await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: again }));
    const alone = json(await single.as(staffSingle, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.single}/records/`, payload: again }));
    expect(res.accepted).toBe(0);
    expect(res).toEqual(alone);
    expect(res.duplicates).toBeGreaterThan(90);
    expect(await shardCounts()).toEqual(before);
    // Stored records and new ones in one batch, in a source no repeat was met in yet: the COPY
    // straight into a shard's table fails on a stored key and keeps nothing; the batch goes in whole.
    // (New records of their own domain only: the searches of the tests below stay as they were.)
    const mixed = [...corpus(300, 8).slice(0, 60), ...Array.from({ length: 60 }, (_, i) => ({ email: `mixed${i}@mixed.example` }))];
    // Watched: the alerts an ingest raises show their records, read in the batch's own transaction on each shard.
    const alerts: unknown[] = [];
    for (const [t, who, k] of [[sharded, staffSharded, 'sharded'], [single, staffSingle, 'single']] as const) {
      const monitor = json(await t.as(who, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Mixed', type: 'domain', terms: ['mixed.example'] } })).id as string;
      const res = json(await t.as(who, { method: 'POST', url: `/api/v1/leaks/sources/${sources[1]?.[k]}/records/`, payload: mixed }));
      expect(res, k).toMatchObject({ accepted: 60, alerts_raised: 60 });
      expect(res.duplicates + res.rejected.length, k).toBe(60);
      const raised = json(await t.as(who, { method: 'GET', url: `/api/v1/monitoring/${monitor}/alerts/?page_size=100&ordering=created_at` })).results as Array<{ leak_record: { id: string; email: string; source: { name: string } } }>;
      // (Ids aside: the two corpora's id sequences parted in the tests above.)
      alerts.push(raised.map(({ leak_record: { id: _id, ...record } }) => record).sort((a, b) => a.email.localeCompare(b.email)));
      // The monitor's own backfill, done here: the tests below count the scans they start.
      await t.services.monitoring.scans.runPending();
    }
    expect(alerts[0]).toHaveLength(60);
    expect(alerts[0]).toEqual(alerts[1]);
    expect((alerts[0] as Array<{ source: { name: string } }>)[0]?.source.name).toBe('Shard source 1');
    expect((await shardCounts()).reduce((a, b) => a + b, 0)).toBe(before.reduce((a, b) => a + b, 0) + 60);
  });

  it('with a shard down: what needs it answers 503 naming it, the rest answers, an ingest is refused whole', async () => {
    const shards = sharded.app.deps.database.corpusShards?.shards ?? [];
    const emails = all().flatMap((r) => (r.email ? [r.email as string] : []));
    const onShard = (i: number) => emails.find((e) => shards[i]?.slots.includes(routeSlot(e))) as string;
    /** A new address whose records go to shard i. */
    const newOn = (i: number) => Array.from({ length: 200 }, (_, k) => `probe${k}@corp9.example`).find((e) => shards[i]?.slots.includes(routeSlot(e))) as string;
    const batch = [{ email: newOn(0) }, { email: newOn(1) }];
    const search = (qs: string) => sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/search/${qs}` });
    const before = json(await search(`?email=${encodeURIComponent(onShard(0))}`));
    const onOne = json(await search(`?email=${encodeURIComponent(onShard(1))}`)).results[0].id as string;
    const total = await shardCounts();
    let monitor = '';
    servers[1]?.kill();
    try {
      // An e-mail search asks the one shard its address hashes to.
      const up = await search(`?email=${encodeURIComponent(onShard(0))}`);
      expect(up.statusCode).toBe(200);
      expect(json(up)).toEqual(before);
      // A record by id: its slot's shard alone.
      const record = (id: string) => sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/records/${id}/` });
      expect((await record(before.results[0].id)).statusCode).toBe(200);
      for (const qs of [`?email=${encodeURIComponent(onShard(1))}`, '?domain=corp1.example', '?q=smith', '?username=jennifer.smith']) {
        const down = await search(qs);
        expect(down.statusCode, qs).toBe(503);
        expect(down.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(down.headers['retry-after']).toBe('30');
        expect(json(down)).toMatchObject({ code: 'unavailable', unavailable: 'corpus shard 1' });
      }
      expect(json(await record(onOne))).toMatchObject({ status: 503, unavailable: 'corpus shard 1' });
      const ingest = await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: batch });
      expect(ingest.statusCode).toBe(503);
      expect(json(ingest)).toMatchObject({ code: 'unavailable', unavailable: 'corpus shard 1', accepted: 0 });
      const health = await sharded.inject({ method: 'GET', url: '/health/' });
      expect(health.statusCode).toBe(200);
      expect(json(health).corpus_shards).toEqual([0, 1, 2].map((i) => ({ shard: `corpus shard ${i}`, slots: i === 0 ? 6 : 5, status: i === 1 ? 'unavailable' : 'ok' })));
      // A monitor made meanwhile: its backfill fails on the shard that is down, and is resumed.
      const made = await sharded.as(staffSharded, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'While down', type: 'domain', terms: ['corp2.example'] } });
      expect(made.statusCode).toBe(201);
      monitor = json(made).id;
      await expect(sharded.services.monitoring.scans.runNext()).rejects.toThrow(/corpus_shard_1|connect/);
    } finally {
      servers[1]?.start();
    }
    // Back: the scan's lease runs out and it is taken again, from where it stopped; its alerts are one server's.
    sharded.clock.advance(3600);
    expect(await sharded.services.monitoring.scans.runPending()).toBe(1);
    const alone = json(await single.as(staffSingle, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'While down', type: 'domain', terms: ['corp2.example'] } })).id;
    await single.services.monitoring.scans.runPending();
    const alertsOf = async (t: TestApp, who: User, id: string) =>
      json(await t.as(who, { method: 'GET', url: `/api/v1/monitoring/${id}/alerts/?page_size=100` })).results.map((a: { leak_record: { id: string } }) => unslotted(a.leak_record.id));
    const got = await alertsOf(sharded, staffSharded, monitor);
    expect(got.length).toBeGreaterThan(10);
    expect(got).toEqual(await alertsOf(single, staffSingle, alone));
    // Nothing of the refused batch was kept on the shard that was up.
    expect(await shardCounts()).toEqual(total);
    const again = await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: batch });
    expect(json(again), again.body).toMatchObject({ accepted: 2 });
    expect(json(await search('?domain=corp1.example')).count).toBeGreaterThan(0);
  });

  it('asks a search again when the layout changed while it ran, and gives up (503) past three changes', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    const search = () => sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp1.example&page_size=5' });
    const before = json(await search());
    const load = vi.spyOn(shards, 'load');
    try {
      // Another process moved a slot: this one read by the layout it knew, then learns of the new one.
      await sql`update corpus_layout set version = version + 1`.execute(sharded.db);
      expect(json(await search())).toEqual(before);
      expect(load).toHaveBeenCalledTimes(1);
      // A layout that changes at every attempt: the search gives up rather than mix two layouts.
      load.mockImplementation(async () => {
        await sql`update corpus_layout set version = version + 1`.execute(sharded.db);
      });
      await sql`update corpus_layout set version = version + 1`.execute(sharded.db);
      const raced = await search();
      expect(raced.statusCode).toBe(503);
      expect(json(raced)).toMatchObject({ code: 'unavailable', unavailable: 'corpus layout' });
    } finally {
      load.mockRestore();
    }
    await shards.load(sharded.db);
    expect(json(await search())).toEqual(before);
  });

  it('deletes a source\'s records from every shard', async () => {
    const before = await shardCounts();
    const res = await sharded.as(staffSharded, { method: 'DELETE', url: `/api/v1/leaks/sources/${sources[2]?.sharded}/` });
    expect(res.statusCode).toBe(204);
    const after = await shardCounts();
    expect(after.reduce((a, b) => a + b, 0)).toBe(before.reduce((a, b) => a + b, 0) - 300 + (await duplicatesOf(2)));
    const search = json(await sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/search/?source=${sources[2]?.sharded}` }));
    expect(search.count).toBe(0);
  });

  /** Records of source `s` that repeated one of its own (stored once): from the single corpus. */
  async function duplicatesOf(s: number) {
    const src = json(await single.as(staffSingle, { method: 'GET', url: `/api/v1/leaks/sources/${sources[s]?.single}/` }));
    return 300 - (src.record_count as number);
  }

  it('adds a fourth shard online: only the slots it takes move, searches and ingests go on throughout', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    const slotCounts = async () => {
      const counts: Record<string, number> = {};
      for (const [i, srv] of servers.entries()) {
        const c = new pg.Client({ connectionString: srv.url });
        await c.connect();
        for (const slot of shards.shards[i]?.slots ?? []) counts[slot] = Number((await c.query(`select count(*) as n from leak_records_s${slot}`)).rows[0].n);
        await c.end();
      }
      return counts;
    };
    const before = await slotCounts();
    const expected = json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp1.example&page_size=100' }));
    servers.push(await startServer());
    const moving = addShard(sharded.db, shards, servers[3]?.url as string);
    let done = false;
    void moving.finally(() => (done = true)).catch(() => undefined);
    // Searches and ingests while the slots move: every search answers the same, every batch is kept.
    let searches = 0;
    const ingested: string[] = [];
    for (let round = 0; !done || round < 3; round++) {
      const res = await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp1.example&page_size=100' });
      expect(res.statusCode).toBe(200);
      expect(json(res)).toEqual(expected);
      searches++;
      const batch = Array.from({ length: 20 }, (_, k) => ({ email: `moving${round}.${k}@during.example` }));
      expect(json(await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: batch })).accepted).toBe(20);
      ingested.push(...batch.map((b) => b.email));
    }
    const moves = await moving;
    expect(searches).toBeGreaterThan(0);
    // The new shard holds four of the sixteen slots, taken from the others; no slot is held twice.
    expect(moves).toHaveLength(4);
    expect(shards.shards.map((s) => s.slots.length)).toEqual(expect.arrayContaining([4, 4, 4, 4]));
    expect(shards.shards[3]?.slots.sort()).toEqual(moves.map((m) => m.slot).sort());
    // Every slot holds what it held plus what was ingested into it; only the moved ones were copied.
    const perSlot: Record<string, number> = {};
    for (const e of ingested) perSlot[routeSlot(e)] = (perSlot[routeSlot(e)] ?? 0) + 1;
    const after = await slotCounts();
    for (const slot of Object.keys(before)) expect(after[slot], `slot ${slot}`).toBe((before[slot] as number) + (perSlot[slot] ?? 0));
    const moved = moves.reduce((n, m) => n + m.copied + m.caughtUp, 0);
    expect(moved).toBeLessThanOrEqual(moves.reduce((n, m) => n + (after[m.slot] as number), 0));
    expect(moved).toBeGreaterThanOrEqual(moves.reduce((n, m) => n + (before[m.slot] as number), 0));
    // The moved slots' tables are gone from the shards they left.
    for (const m of moves) {
      const c = new pg.Client({ connectionString: servers[m.from]?.url });
      await c.connect();
      expect((await c.query(`select to_regclass('leak_records_s${m.slot}') as t`)).rows[0].t).toBeNull();
      await c.end();
    }
    // Every record ingested during the move is found once, by e-mail (its slot's shard alone).
    for (const e of ingested.slice(0, 40)) expect(json(await sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/search/?email=${e}` })).count, e).toBe(1);
    expect(json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=during.example' })).count).toBe(ingested.length);
    expect(json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp1.example&page_size=100' }))).toEqual(expected);
  });

  it('puts a move cut off mid-switch right (at start, or by add-shard run again), and add-shard run again resumes', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    expect(shards.shards).toHaveLength(4);
    const search = async () => json(await sharded.as(staffSharded, { method: 'GET', url: '/api/v1/leaks/search/?domain=corp1.example&page_size=100' }));
    const expected = await search();
    const on = async (i: number, statements: string[]) => {
      const c = new pg.Client({ connectionString: servers[i]?.url });
      await c.connect();
      try {
        const out = [];
        for (const q of statements) out.push((await c.query(q)).rows);
        return out;
      } finally {
        await c.end();
      }
    };
    const x = shards.shards[0]?.slots[0] as string;
    const y = shards.shards[2]?.slots[0] as string;
    // Killed between the switch's statements: slot x detached on its shard and a copy of it attached
    // on the new one, the main database not told; and a leftover table of slot y on shard 1.
    await on(0, [`alter table leak_records detach partition leak_records_s${x}`]);
    await on(3, [`create table leak_records_s${x} (like leak_records_template including all)`, `alter table leak_records attach partition leak_records_s${x} for values in ('${x}')`]);
    await on(1, [`create table leak_records_s${y} (like leak_records_template including all)`]);
    const { repairLayoutIfIdle } = await import('../../src/db/corpus-rebalance.js');
    expect(await repairLayoutIfIdle(sharded.db, shards)).toBe(3);
    const attached = async (i: number, slot: string) =>
      (await on(i, [`select c.relispartition as p from pg_class c where c.relname = 'leak_records_s${slot}' and c.relnamespace = current_schema()::regnamespace`]))[0]?.[0]?.p ?? null;
    expect(await attached(0, x)).toBe(true);
    expect(await attached(3, x)).toBeNull();
    expect(await attached(1, y)).toBeNull();
    expect(await repairLayoutIfIdle(sharded.db, shards)).toBe(0);
    expect(await search()).toEqual(expected);
    // A record of slot x is written to its shard again.
    const email = Array.from({ length: 500 }, (_, k) => `repair${k}@after.example`).find((e) => routeSlot(e) === x) as string;
    expect(json(await sharded.as(staffSharded, { method: 'POST', url: `/api/v1/leaks/sources/${sources[0]?.sharded}/records/`, payload: [{ email }] })).accepted).toBe(1);
    expect(json(await sharded.as(staffSharded, { method: 'GET', url: `/api/v1/leaks/search/?email=${email}` })).count).toBe(1);
    // add-shard again with the last shard's URL: it takes the slots it lacks (none here); any other shard's URL is refused.
    expect(await addShard(sharded.db, shards, servers[3]?.url as string)).toEqual([]);
    await expect(addShard(sharded.db, shards, servers[1]?.url as string)).rejects.toThrow(/a shard of this corpus already/);
  });
});
