import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { normaliseRecord } from '../../src/domain/leak-record.js';
import type { IngestHook, InsertedRecord } from '../../src/modules/hooks.js';
import { type IngestItem, IngestCutOff } from '../../src/modules/leaks/leaks.service.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/**
 * The seam where the monitoring matcher and the tracking-token scanner plug in: hooks run inside
 * each batch's transaction with the records that batch added. A batch that fails (here: a hook
 * that throws) is rolled back whole, with the batches before it in its transaction (several, with
 * transactionMs), the batches committed before stay, and the error says how far it got.
 */
describe('leak ingestion hooks and part-way failures', () => {
  let t: TestApp;
  let staff: User;
  let sourceId: string;
  const actor = { p: null, ip: null };
  const records = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => ({ index: from + i, value: { email: `seam${from + i}@seam.example`, password: `Seam-secret-${from + i}` } }));
  const stored = async () =>
    (await t.db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number | string>().as('n')).where('source_id', '=', sourceId).executeTakeFirstOrThrow()).n;

  /**
   * The counters kept on ingest (written once per transaction, as it commits) against what is
   * stored: the corpus total and password class, the domain's count and the source's.
   */
  const expectCountersToMatch = async () => {
    const n = async (q: Promise<{ n: number | string | bigint } | undefined>) => Number((await q)?.n ?? 0);
    const counter = (key: string) => n(t.db.selectFrom('leak_counters').select('n').where('key', '=', key).executeTakeFirst());
    const all = await n(t.db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst());
    const withPassword = await n(t.db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number>().as('n')).where('password_sha1', 'is not', null).executeTakeFirst());
    const inDomain = await n(t.db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number>().as('n')).where('domain_rev', '=', 'example.seam.').executeTakeFirst());
    expect(all).toBeGreaterThan(0);
    expect(await counter('total')).toBe(all);
    expect(await counter('class:password')).toBe(withPassword);
    expect(await counter('with_password')).toBe(withPassword);
    expect(await n(t.db.selectFrom('leak_domain_counts').select('n').where('key', '=', 'example.seam.').executeTakeFirst())).toBe(inDomain);
    expect(await n(t.db.selectFrom('leak_sources').select('record_count as n').where('id', '=', sourceId).executeTakeFirst())).toBe(Number(await stored()));
  };

  /** Subscriptions to leaks.ingested made by a test, undone after it. */
  const off: Array<() => void> = [];
  const onIngest = (hook: IngestHook) => off.push(t.services.hooks.on('leaks.ingested', hook));

  /** The number of records each batch stores from here on, as an ingest hook sees them. */
  const batchSizes = () => {
    const sizes: number[] = [];
    onIngest(async (_trx, added) => {
      sizes.push(added.count);
      return { alerts: 0, exposures: 0 };
    });
    return sizes;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'seam-platform', true)).owner;
    sourceId = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Seam' } })).id as string;
  });
  afterEach(() => {
    off.splice(0).forEach((unsubscribe) => unsubscribe());
  });
  afterAll(() => t.close());

  it('gives hooks the new records of each batch, with ids, inside the transaction that stores them', async () => {
    const seen: Array<{ records: InsertedRecord[]; visible: number; source: string }> = [];
    const hook: IngestHook = async (trx, batch, source) => {
      const added = await batch.load();
      expect(added).toHaveLength(batch.count);
      const ids = added.map((r) => r.id);
      const visible = ids.length ? Number((await trx.selectFrom('leak_records').select((eb) => eb.fn.countAll<number | string>().as('n')).where('id', 'in', ids).executeTakeFirstOrThrow()).n) : 0;
      seen.push({ records: added, visible, source: source.name });
      return { alerts: added.length, exposures: 1 };
    };
    onIngest(hook);

    const first = await t.services.leaks.ingest(sourceId, records(0, 5), actor, { batchSize: 2 });
    expect(first).toMatchObject({ accepted: 5, duplicates: 0, alerts_raised: 5, exposures_found: 3 });
    expect(seen.map((s) => s.records.length)).toEqual([2, 2, 1]);
    expect(seen.every((s) => s.visible === s.records.length && s.source === 'Seam')).toBe(true);
    const one = seen[0]?.records[0];
    expect(one).toMatchObject({ email: 'seam0@seam.example', domain: 'seam.example', source_id: sourceId });
    expect(one?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(seen)).not.toContain('Seam-secret');

    // Re-ingesting with one new record: hooks see only what was added.
    seen.length = 0;
    const again = await t.services.leaks.ingest(sourceId, records(3, 6), actor, { batchSize: 2 });
    expect(again).toMatchObject({ accepted: 1, duplicates: 2, alerts_raised: 1 });
    expect(seen.flatMap((s) => s.records.map((r) => r.email))).toEqual(['seam5@seam.example']);
    expect(Number(await stored())).toBe(6);
  });

  it('starts large batches at a thousand records and doubles them up to the size asked for', async () => {
    const sizes = batchSizes();
    const processed: number[] = [];
    const report = await t.services.leaks.ingest(sourceId, records(100_000, 116_000), actor, { onBatch: (_r, n) => processed.push(n), batchSize: 10_000 });
    expect(report).toMatchObject({ accepted: 16_000, duplicates: 0 });
    expect(sizes).toEqual([1000, 2000, 4000, 8000, 1000]);
    expect(processed).toEqual([1000, 3000, 7000, 15_000, 16_000, 16_000]);
  }, 60_000);

  it('lets the event loop turn after each commit (timers, signals, other requests)', async () => {
    // Records already in memory (a JSON array, or the CLI's reader ahead of the writer): without a
    // turn, the whole ingest ran as one chain of promise callbacks, and nothing else ran meanwhile.
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    const turnsAtCommit: number[] = [];
    try {
      await t.services.leaks.ingest(sourceId, records(300_000, 303_000), actor, { onBatch: () => turnsAtCommit.push(turns) });
    } finally {
      clearInterval(counting);
    }
    expect(turnsAtCommit).toHaveLength(4);
    // A timer ran between each commit and the next.
    for (let i = 1; i < turnsAtCommit.length - 1; i++) expect(turnsAtCommit[i]).toBeGreaterThan(turnsAtCommit[i - 1] as number);
  }, 60_000);

  it('writes what it holds, from a thousand records, when the producer pauses', async () => {
    const sizes = batchSizes();
    const processed: number[] = [];
    // The CLI's reader marks the last item it has ready. Pauses at 500 (too few to write), at 2,500
    // (a rejected record: its batch is written all the same) and at 4,000.
    const items: IngestItem[] = records(200_000, 205_000).map(({ index, value }, i) => ({
      index,
      result: normaliseRecord(i === 2499 ? { email: 'not an address' } : value),
      pause: i === 499 || i === 2499 || i === 3999,
    }));
    const report = await t.services.leaks.ingest(sourceId, items, actor, { onBatch: (_r, n) => processed.push(n), batchSize: 10_000 });
    expect(report).toMatchObject({ accepted: 4999, duplicates: 0 });
    expect(report.rejected.map((r) => r.index)).toEqual([202_499]);
    expect(processed).toEqual([1000, 2500, 4000, 5000, 5000]);
    expect(sizes).toEqual([1000, 1499, 1500, 1000]);
  }, 60_000);

  it('keeps the batches committed before a failure, rolls back the failing one, and says where it stopped', async () => {
    let calls = 0;
    onIngest(async () => {
      if (++calls === 2) throw new Error('matcher unavailable');
      return { alerts: 0, exposures: 0 };
    });
    const before = Number(await stored());
    const err = await t.services.leaks.ingest(sourceId, records(100, 110), actor, { batchSize: 4 }).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err?.status).toBe(503);
    expect(err?.message).toContain('after 4 records');
    expect(err?.extra.body).toMatchObject({ accepted: 4, processed: 4 });
    expect(Number(await stored())).toBe(before + 4);

    // Re-sending everything once the failure is gone stores the rest and skips what was kept.
    off.splice(0).forEach((unsubscribe) => unsubscribe());
    expect(await t.services.leaks.ingest(sourceId, records(100, 110), actor, { batchSize: 4 })).toMatchObject({ accepted: 6, duplicates: 4 });
    expect(Number(await stored())).toBe(before + 10);
    const count = json(await t.as(staff, { method: 'GET', url: `/api/v1/leaks/sources/${sourceId}/` })).record_count;
    expect(count).toBe(before + 10);
  });

  /** Which transaction each batch was written in, numbered from 0, as an ingest hook sees them; each batch moves the clock on by `seconds`. */
  const transactionsOfBatches = (seconds: number) => {
    const seen: unknown[] = [];
    const order: number[] = [];
    onIngest(async (trx) => {
      if (!seen.includes(trx)) seen.push(trx);
      order.push(seen.indexOf(trx));
      t.clock.advance(seconds);
      return { alerts: 0, exposures: 0 };
    });
    return order;
  };

  it('keeps a transaction open for more batches for transactionMs, and commits the last one at the end', async () => {
    const order = transactionsOfBatches(0.4);
    const processed: number[] = [];
    const before = Number(await stored());
    const report = await t.services.leaks.ingest(sourceId, records(300, 314), actor, { onBatch: (_r, n) => processed.push(n), batchSize: 2, transactionMs: 1000 });
    expect(report).toMatchObject({ accepted: 14, duplicates: 0 });
    // 0.4 s a batch: the third batch of a transaction finds it open for 1.2 s and commits it.
    expect(order).toEqual([0, 0, 0, 1, 1, 1, 2]);
    // Progress is reported at each commit.
    expect(processed).toEqual([6, 12, 14, 14]);
    expect(Number(await stored())).toBe(before + 14);
    await expectCountersToMatch();
  });

  it('rolls back the whole open transaction when a batch in it fails, and reports the last commit', async () => {
    const order = transactionsOfBatches(0.4);
    let calls = 0;
    onIngest(async () => {
      if (++calls === 5) throw new Error('matcher unavailable');
      return { alerts: 1, exposures: 0 };
    });
    const before = Number(await stored());
    const err = await t.services.leaks.ingest(sourceId, records(400, 414), actor, { batchSize: 2, transactionMs: 1000 }).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(order).toEqual([0, 0, 0, 1, 1]);
    expect(err).toBeInstanceOf(AppError);
    expect(err?.status).toBe(503);
    expect(err?.message).toContain('after 6 records (6 accepted)');
    // The fourth batch was written and is undone with the fifth, in the report too.
    expect(err?.extra.body).toMatchObject({ accepted: 6, duplicates: 0, alerts_raised: 3, processed: 6 });
    expect(Number(await stored())).toBe(before + 6);
    // The counts of the undone batches are undone with them.
    await expectCountersToMatch();

    off.splice(0).forEach((unsubscribe) => unsubscribe());
    expect(await t.services.leaks.ingest(sourceId, records(400, 414), actor, { batchSize: 2, transactionMs: 1000 })).toMatchObject({ accepted: 8, duplicates: 6 });
    expect(Number(await stored())).toBe(before + 14);
  });

  it("stores a transaction's batches again when PostgreSQL rolls it back as a deadlock's victim, once each", async () => {
    const order = transactionsOfBatches(0.4);
    let calls = 0;
    // The fifth batch (the second of the second transaction) is picked as a deadlock's victim, twice.
    onIngest(async () => {
      calls++;
      if (calls === 5 || calls === 7) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return { alerts: 1, exposures: 0 };
    });
    const before = Number(await stored());
    const deadlocks = async () => (await t.app.deps.metrics.ingestDeadlocks.get()).values[0]?.value ?? 0;
    const retried = await deadlocks();
    const report = await t.services.leaks.ingest(sourceId, records(1600, 1614), actor, { batchSize: 2, transactionMs: 1000 });
    // Every record once, its alert once: the batches of the rolled-back transaction counted again, not twice.
    expect(report).toMatchObject({ accepted: 14, duplicates: 0, alerts_raised: 7 });
    expect(Number(await stored())).toBe(before + 14);
    expect(await deadlocks()).toBe(retried + 2);
    // The second transaction is tried three times: each retry stores its fourth batch again, then the fifth.
    expect(order).toEqual([0, 0, 0, 1, 1, 2, 2, 3, 3, 3, 4]);
    await expectCountersToMatch();
  });

  it('stores every item read before the items fail part-way, and says how many', async () => {
    const before = Number(await stored());
    async function* cutOff(): AsyncGenerator<IngestItem> {
      yield* records(500, 505);
      yield { index: 5, value: { email: 'not an e-mail' } };
      throw new Error('stream cut off');
    }
    const err = await t.services.leaks.ingest(sourceId, cutOff(), actor, { batchSize: 2, transactionMs: 60_000 }).then(
      () => undefined,
      (e: unknown) => e as IngestCutOff,
    );
    expect(err).toBeInstanceOf(IngestCutOff);
    expect(err?.message).toBe('stream cut off');
    expect((err?.cause as Error).message).toBe('stream cut off');
    // Two batches of two were written in the open transaction; the fifth record, still waiting for
    // its batch, is written too.
    expect(err?.progress).toMatchObject({ accepted: 5, duplicates: 0, processed: 6, rejected: [{ index: 5 }] });
    expect(Number(await stored())).toBe(before + 5);
    await expectCountersToMatch();
    expect(await t.services.leaks.ingest(sourceId, records(500, 505), actor)).toMatchObject({ accepted: 0, duplicates: 5 });
    await expectCountersToMatch();
  });

  it('keeps an error of the items (413 past a stream\'s limit) as it is, with how far the ingest got', async () => {
    const before = Number(await stored());
    async function* tooLong(): AsyncGenerator<IngestItem> {
      yield* records(600, 1503);
      throw new AppError('payload_too_large', 413, 'Request body is too large.');
    }
    const err = await t.services.leaks.ingest(sourceId, tooLong(), actor).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err?.status).toBe(413);
    expect(err?.code).toBe('payload_too_large');
    expect(err?.detail).toBe('Request body is too large. Ingestion stopped after 903 records (903 accepted); every record before that is stored. Re-send the rest: duplicates are skipped.');
    expect(err?.extra.body).toMatchObject({ accepted: 903, duplicates: 0, processed: 903 });
    // A first batch of 1,000 was never full: all 903 records are written as the items end.
    expect(Number(await stored())).toBe(before + 903);
    await expectCountersToMatch();
  });

  it('answers an NDJSON stream past its 64 MiB with 413, every record before the limit stored and counted', async () => {
    const before = Number(await stored());
    const lines = records(2000, 3500).map((r) => JSON.stringify(r.value));
    // 1,500 records, then a line that never ends before the limit.
    const payload = `${lines.join('\n')}\n${' '.repeat(65 * 1024 * 1024)}`;
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${sourceId}/records/`, headers: { 'content-type': 'application/x-ndjson' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(json(res)).toMatchObject({ status: 413, code: 'payload_too_large', accepted: 1500, duplicates: 0, processed: 1500 });
    expect(json(res).detail).toContain('Ingestion stopped after 1500 records (1500 accepted)');
    expect(Number(await stored())).toBe(before + 1500);
    await expectCountersToMatch();
  });

  it('answers a failed HTTP ingest with problem+json and the progress, never the cause', async () => {
    onIngest(async () => {
      throw new Error('internal matcher detail');
    });
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${sourceId}/records/`, payload: [{ email: 'http@seam.example' }] });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(json(res)).toMatchObject({ status: 503, accepted: 0, processed: 0 });
    expect(res.body).not.toContain('internal matcher detail');
    expect(json(await t.as(staff, { method: 'GET', url: '/api/v1/leaks/search/?email=http@seam.example' })).count).toBe(0);
  });
});
