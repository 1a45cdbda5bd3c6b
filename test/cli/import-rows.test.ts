import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importLeaks } from '../../src/cli/import-leaks.js';
import { idInSlot, recordSlot, slotOfId } from '../../src/db/corpus-slots.js';
import { normaliseRecord, type NormalisedRecord, recordKey } from '../../src/domain/leak-record.js';
import { encodeRows, RowsInProgress } from '../../src/modules/leaks/leaks.copy-rows.js';
import { counterDeltas, domainDeltas } from '../../src/modules/leaks/leaks.counters.js';
import { copyChunks } from '../../src/modules/leaks/leaks.record-rows.js';
import { buildTestApp, json, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';
import { type Replica, startServer } from '../helpers/pg-replica.js';

/**
 * On PostgreSQL the import's reader thread makes each batch into COPY rows itself (encodeRows), and
 * the writer forwards the bytes: what is stored, counted and raised must be what an ingest of the
 * same records through the API stores, counts and raises.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-rows-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const quiet = () => fs.createWriteStream('/dev/null') as unknown as NodeJS.WriteStream;

const SOURCE = '018f0000-0000-7000-8000-0000000000aa';
const normalised = (value: object) => {
  const r = normaliseRecord(value);
  if (!r.ok) throw new Error('invalid test record');
  return r.record;
};

describe('encodeRows', () => {
  const records = ['c@rows.example', 'a@rows.example', 'b@rows.example', 'a@rows.example', 'x@rows.example'].map((email) => normalised({ email }));
  const keys = records.map((r) => recordKey(SOURCE, r.fingerprint));
  let n = 0;
  const newId = () => `018f0000-0000-7000-8000-${(n++).toString(16).padStart(12, '0')}`;

  it('writes each key once, by key, ids handed out in key order (a repeat takes one too)', () => {
    n = 0;
    const { rows, order } = encodeRows(records, keys, newId, SOURCE, '2026-01-01T00:00:00.000Z', false);
    const byKey = keys.map((_, i) => i).sort((x, y) => Buffer.compare(keys[x] as Uint8Array, keys[y] as Uint8Array));
    const once = byKey.filter((i, k) => k === 0 || Buffer.compare(keys[i] as Uint8Array, keys[byKey[k - 1] as number] as Uint8Array) !== 0);
    expect(order).toEqual(once);
    expect(order).toHaveLength(4);
    expect(order).not.toContain(3);
    // Five ids made, in key order; the repeat's is not stored.
    expect(n).toBe(5);
    expect([...rows.ids].sort()).toEqual(rows.ids);
    const pick = <T>(list: T[]) => order.map((i) => list[i] as T);
    expect(Buffer.from(rows.copy).toString()).toBe(Buffer.concat([...copyChunks(pick(records), rows.ids, pick(keys), SOURCE, '2026-01-01T00:00:00.000Z')]).toString());
    expect(rows.slotEnds).toBeUndefined();
  });

  it('slotted: each slot its rows together, ids naming the slot, and where each slot ends', () => {
    n = 0;
    const { rows, order } = encodeRows(records, keys, newId, SOURCE, '2026-01-01T00:00:00.000Z', true);
    const slots = order.map((i) => recordSlot(records[i] as NormalisedRecord, keys[i] as Uint8Array));
    expect(rows.ids.map(slotOfId)).toEqual(slots);
    expect([...slots].sort()).toEqual(slots);
    const ends = rows.slotEnds as { rows: number[]; bytes: number[] };
    expect(ends.rows).toHaveLength(16);
    for (let s = 0; s < 16; s++) {
      const from = s ? (ends.rows[s - 1] as number) : 0;
      const ids = rows.ids.slice(from, ends.rows[s]);
      expect(ids.every((id) => slotOfId(id) === s.toString(16))).toBe(true);
      const text = Buffer.from(rows.copy.subarray(s ? ends.bytes[s - 1] : 0, ends.bytes[s])).toString();
      expect(text.split('\n').filter(Boolean).map((line) => line.slice(0, 36))).toEqual(ids);
    }
    expect(idInSlot(rows.ids[0] as string, 'f').endsWith('f')).toBe(true);
  });

  it('made record by record as the reader does (RowsInProgress): the same rows, the counter changes and search words of the rows, none after a repeat', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const dated = [...records, normalised({ email: 'y@rows.example', password: 'pw', leaked_at: '2023-04-05' })];
    const datedKeys = dated.map((r) => recordKey(SOURCE, r.fingerprint));
    const unique = [0, 1, 2, 4, 5];
    for (const slotted of [false, true]) {
      const progress = new RowsInProgress({ sourceId: SOURCE, at, slotted, counting: { breachDate: '2022-11-01' } });
      // The key is read as the record is added: a buffer written over afterwards changes nothing.
      const scratch = new Uint8Array(16);
      for (const i of unique) {
        scratch.set(datedKeys[i] as Uint8Array);
        progress.add(dated[i] as NormalisedRecord, scratch);
      }
      n = 0;
      const made = progress.take(unique.map((i) => datedKeys[i] as Uint8Array), newId);
      n = 0;
      const whole = encodeRows(unique.map((i) => dated[i] as NormalisedRecord), unique.map((i) => datedKeys[i] as Uint8Array), newId, SOURCE, at, slotted);
      expect(Buffer.from(made.rows.copy).toString()).toBe(Buffer.from(whole.rows.copy).toString());
      expect(made.rows.ids).toEqual(whole.rows.ids);
      expect(made.rows.slotEnds).toEqual(whole.rows.slotEnds);
      const kept = made.order.map((k) => dated[unique[k] as number] as NormalisedRecord);
      expect(new Map(made.rows.counts?.corpus)).toEqual(counterDeltas(kept, '2022-11-01', 1));
      expect(new Map(made.rows.counts?.domains)).toEqual(domainDeltas(kept, 1));
      expect(made.rows.words).toBe(kept.map((r) => r.search_text).join(' '));
      // Taken, it starts again: a batch with a repeated record gives no counts (the writer counts what was stored).
      dated.forEach((r, i) => progress.add(r, datedKeys[i] as Uint8Array));
      const repeated = progress.take(datedKeys, newId);
      expect(repeated.order).toHaveLength(5);
      expect(repeated.rows.counts).toBeUndefined();
      expect(repeated.rows.words?.split(' ')).toEqual(repeated.order.flatMap((k) => (dated[k] as NormalisedRecord).search_text.split(' ')));
    }
  });
});

describe.skipIf(!TEST_PG_URL)('import-leaks on PostgreSQL: rows made by the reader thread', () => {
  /** Lines from..to, each the record of its number modulo `mod`: a number met again is the same record. */
  const lines = (from: number, to: number, mod: number) =>
    Array.from({ length: to - from }, (_, k) => {
      const i = (from + k) % mod;
      return JSON.stringify({
        email: `user${i}@d${i % 37}.rows.example`,
        ...(i % 3 === 0 ? { password: `pw-${i}` } : {}),
        ...(i % 4 === 0 ? { leaked_at: `2023-0${(i % 9) + 1}-15` } : {}),
        ...(i % 5 === 0 ? { ip: `10.0.${i % 200}.${i % 250}` } : {}),
        ...(i % 7 === 0 ? { full_name: `Name ${i % 300}` } : {}),
      });
    });

  /** What an ingest leaves, not counting ids and times: its records, counters, vocabulary and alerts. */
  const state = async (t: TestApp, sourceId: string) => ({
    records: (await t.db.selectFrom('leak_records').select(['email', 'username', 'domain_rev', 'ip_key', 'phone', 'full_name', 'password_sha1', 'extra', 'leaked_at', 'search_text', 'severity']).where('source_id', '=', sourceId).execute())
      .map((r) => JSON.stringify(r))
      .sort(),
    counters: (await t.db.selectFrom('leak_counters').selectAll().orderBy('key').execute()).map((c) => [c.key, Number(c.n)]).filter(([, n]) => n !== 0),
    domains: (await t.db.selectFrom('leak_domain_counts').selectAll().orderBy('key').execute()).map((c) => [c.key, Number(c.n)]),
    words: (await t.db.selectFrom('leak_words').select('word').orderBy('word').execute()).map((w) => w.word),
    recordCount: Number((await t.db.selectFrom('leak_sources').select('record_count').where('id', '=', sourceId).executeTakeFirstOrThrow()).record_count),
    alerts: (await t.db.selectFrom('monitor_alerts').select(['matched_term', 'matched_field']).execute()).map((a) => `${a.matched_term} ${a.matched_field}`).sort(),
  });

  /** Three PostgreSQL servers of the sharded run. */
  const servers: Replica[] = [];
  afterAll(() => servers.forEach((s) => s.remove()));

  const setUp = async (env: Record<string, string> = {}) => {
    const t = await buildTestApp(env);
    const org = await t.createOrg('enterprise', 'rows');
    expect(json(await t.as(org.owner, { method: 'POST', url: '/api/v1/monitoring/', payload: { name: 'Rows', type: 'domain', terms: ['d3.rows.example'], backfill: false } })).id).toBeTruthy();
    const source = await t.services.leaks.createSource({ p: null, ip: null }, { name: 'Rows', breach_date: '2022-11-01' });
    return { t, sourceId: source.id };
  };

  for (const sharded of [false, true]) {
    it(`stores, counts, indexes the words of and raises alerts for the same records as an ingest through the API, new or met again${sharded ? ', the corpus over three shards' : ''}`, async () => {
      const first = path.join(dir, 'first.ndjson');
      const second = path.join(dir, 'second.ndjson');
      // Within the first file, records repeat (the same record twice is one); the second meets the first's records and adds others.
      fs.writeFileSync(first, `${lines(0, 2600, 1700).join('\n')}\n`);
      fs.writeFileSync(second, `${lines(1300, 4200, 5000).join('\n')}\n`);
      if (sharded) for (let i = 0; i < 3; i++) servers.push(await startServer());
      const cli = await setUp(sharded ? { THREATMON_CORPUS_SHARDS: servers.map((s) => s.url).join(',') } : {});
      const api = await setUp();
      try {
        expect(await cli.t.services.leaks.rowsMadeByReader(cli.sourceId)).toMatchObject({ breachDate: '2022-11-01', slotted: sharded });
        const reports = [];
        for (const [bulk, file] of [[true, first], [false, second]] as const) {
          const cliReport = await importLeaks(cli.t.services.leaks, { file, source: 'Rows', bulk, progress: false, out: quiet() });
          const items = fs.readFileSync(file, 'utf8').trim().split('\n').map((line, index) => ({ index, value: JSON.parse(line) as unknown }));
          const apiReport = await api.t.services.leaks.ingest(api.sourceId, items, { p: null, ip: null });
          expect({ accepted: cliReport.accepted, duplicates: cliReport.duplicates, alerts: cliReport.alerts_raised }).toEqual({ accepted: apiReport.accepted, duplicates: apiReport.duplicates, alerts: apiReport.alerts_raised });
          reports.push(cliReport);
        }
        expect(reports[0]).toMatchObject({ accepted: 1700, duplicates: 900 });
        expect(reports[1]).toMatchObject({ accepted: 2500, duplicates: 400 });
        expect(reports[0]?.alerts_raised).toBeGreaterThan(0);
        const [got, want] = [await state(cli.t, cli.sourceId), await state(api.t, api.sourceId)];
        expect(got.records.length).toBe(want.recordCount);
        expect(got).toEqual(want);
      } finally {
        await cli.t.close();
        await api.t.close();
      }
    }, 180_000);
  }
});
