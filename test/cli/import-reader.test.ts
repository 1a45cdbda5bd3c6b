import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportError, importLeaks, readerThreads } from '../../src/cli/import-leaks.js';
import { capture } from '../helpers/capture.js';
import { buildTestApp, TEST_PG_URL } from '../helpers/build-app.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-reader-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const quiet = () => fs.createWriteStream('/dev/null') as unknown as NodeJS.WriteStream;


describe('import-leaks reader thread', () => {
  it('is reused by the next import in the same process, each file keyed to its own source; one that failed is not', async () => {
    const t = await buildTestApp();
    try {
      const { leaks } = t.services;
      const file = (name: string, emails: string[]) => {
        const f = path.join(dir, name);
        fs.writeFileSync(f, emails.map((email) => JSON.stringify({ email })).join('\n'));
        return f;
      };
      const a = file('a.ndjson', ['one@reader.example', 'two@reader.example']);
      const b = file('b.ndjson', ['one@reader.example', 'three@reader.example', 'not an e-mail']);
      const started = readerThreads.started;
      const first = await importLeaks(leaks, { file: a, source: 'Reader A', createSource: true, progress: false, out: quiet() });
      const second = await importLeaks(leaks, { file: b, source: 'Reader B', createSource: true, progress: false, out: quiet() });
      expect(first).toMatchObject({ accepted: 2, duplicates: 0 });
      // The same e-mail in another source is a record of that source, not a duplicate.
      expect(second).toMatchObject({ accepted: 2, duplicates: 0 });
      expect(second.rejected).toHaveLength(1);
      expect(readerThreads.started - started).toBe(1);
      const again = await importLeaks(leaks, { file: b, source: 'Reader B', progress: false, out: quiet() });
      expect(again).toMatchObject({ accepted: 0, duplicates: 2 });
      expect(readerThreads.started - started).toBe(1);

      // A file that cannot be read: the error is the import's, and its thread is not kept.
      await expect(importLeaks(leaks, { file: dir, source: 'Reader A', format: 'ndjson', progress: false, out: quiet() })).rejects.toThrow(ImportError);
      expect(readerThreads.started - started).toBe(1);
      expect(await importLeaks(leaks, { file: a, source: 'Reader A', progress: false, out: quiet() })).toMatchObject({ accepted: 0, duplicates: 2 });
      expect(readerThreads.started - started).toBe(2);
    } finally {
      await t.close();
    }
  }, 60_000);

  it('reports an import stopped after its whole file was read as finished, not as interrupted', async () => {
    const t = await buildTestApp();
    try {
      const { leaks } = t.services;
      const f = path.join(dir, 'whole.ndjson');
      fs.writeFileSync(f, ['a@whole.example', 'b@whole.example'].map((email) => JSON.stringify({ email })).join('\n'));
      const stop = new AbortController();
      // The signal comes once every record is stored: nothing is left for a second run to load.
      const stopAfterIngest = new Proxy(leaks, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver) as unknown;
          if (key !== 'ingest' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
          return async (...args: unknown[]) => {
            const report = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            stop.abort();
            return report;
          };
        },
      });
      const { out, said } = capture();
      const report = await importLeaks(stopAfterIngest, { file: f, source: 'Whole', createSource: true, progress: false, out, signal: stop.signal });
      expect(stop.signal.aborted).toBe(true);
      expect(report).toMatchObject({ accepted: 2, interrupted: false });
      expect(said()).toMatch(/^Imported .*2 accepted/m);
      expect(said()).not.toContain('load the rest');
    } finally {
      await t.close();
    }
  });

  it('cuts batches by bytes as well as by records, so large records do not pile up', async () => {
    const t = await buildTestApp();
    try {
      const { leaks } = t.services;
      // 240 records of about 100 KB each (50 extra values of 2,000 characters): about 24 MB.
      const f = path.join(dir, 'large.ndjson');
      const fd = fs.openSync(f, 'w');
      for (let i = 0; i < 240; i++) {
        const extra = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, `${i}-${k}-`.padEnd(2000, 'x')]));
        fs.writeSync(fd, `${JSON.stringify({ email: `large${i}@reader.example`, extra })}\n`);
      }
      fs.closeSync(fd);
      const sizes: number[] = [];
      t.services.hooks.on('leaks.ingested', async (_trx, added) => {
        sizes.push(added.count);
        return { alerts: 0, exposures: 0 };
      });
      const { out, said: printed } = capture();
      const report = await importLeaks(leaks, { file: f, source: 'Reader large', createSource: true, progress: false, bulk: false, out });
      expect(report).toMatchObject({ accepted: 240, duplicates: 0 });
      // The progress line (not a terminal: the first batch's, then one every 5 s) counts the input of
      // the records stored, not what the reader has read ahead: records all the same size, so the
      // share of the file is the share of the records.
      const line = /^(\d+) records \((\d+)%\), \d+ rec\/s$/m.exec(printed());
      expect(line, printed()).toBeTruthy();
      const [first, percent] = [Number(line?.[1]), Number(line?.[2])];
      expect(first).toBeLessThanOrEqual(42);
      expect(Math.abs(percent - (first / 240) * 100)).toBeLessThanOrEqual(1);
      expect(report.rejected).toEqual([]);
      // 4 MiB of input a batch: about 41 of these records, not 1,000.
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(240);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(42);
      expect(sizes.length).toBeGreaterThanOrEqual(6);
      const stored = await t.db.selectFrom('leak_records').select('extra').where('email', '=', 'large239@reader.example').executeTakeFirstOrThrow();
      expect(JSON.parse(stored.extra as string).k49).toBe('239-49-'.padEnd(2000, 'x'));
    } finally {
      await t.close();
    }
  }, 60_000);

  it.skipIf(Boolean(TEST_PG_URL))('keeps a smaller SQLite page cache while a plain import runs, and puts the server\'s back', async () => {
    const t = await buildTestApp();
    try {
      const raw = t.app.deps.database.sqlite as NonNullable<typeof t.app.deps.database.sqlite>;
      const { leaks } = t.services;
      const f = path.join(dir, 'cache.ndjson');
      fs.writeFileSync(f, Array.from({ length: 50 }, (_, i) => JSON.stringify({ email: `cache${i}@reader.example` })).join('\n'));
      const before = raw.pragma('cache_size', { simple: true });
      expect(before).toBe(-65536);
      const during: unknown[] = [];
      t.services.hooks.on('leaks.ingested', async () => {
        during.push(raw.pragma('cache_size', { simple: true }));
        return { alerts: 0, exposures: 0 };
      });
      expect(await importLeaks(leaks, { file: f, source: 'Reader cache', createSource: true, progress: false, out: quiet() })).toMatchObject({ accepted: 50 });
      expect(during).toEqual([-32768]);
      expect(raw.pragma('cache_size', { simple: true })).toBe(before);
      // Also when the import fails.
      await expect(importLeaks(leaks, { file: dir, source: 'Reader cache', format: 'ndjson', progress: false, out: quiet() })).rejects.toThrow(ImportError);
      expect(raw.pragma('cache_size', { simple: true })).toBe(before);
    } finally {
      await t.close();
    }
  });
});

describe('import-leaks progress', () => {
  it('moves while bytes are read even when no line ends', async () => {
    const t = await buildTestApp();
    try {
      // 8 MiB without a newline, then a record: nothing is stored until the long line ends.
      const f = path.join(dir, 'no-line-end.txt');
      const fd = fs.openSync(f, 'w');
      for (let i = 0; i < 8; i++) fs.writeSync(fd, Buffer.alloc(1024 * 1024, 'x'));
      fs.writeSync(fd, '\nmallory@example.com:a password\n');
      fs.closeSync(fd);
      const { out, said } = capture();
      const report = await importLeaks(t.services.leaks, { file: f, source: 'Progress', createSource: true, progress: false, format: 'combo', out });
      expect(report).toMatchObject({ accepted: 1 });
      // The first progress line (written at once, then every 5 s) comes before any record is stored.
      const first = /^(\d+) records \((\d+)%\)/m.exec(said());
      expect(first, said()).toBeTruthy();
      expect(Number(first?.[1])).toBe(0);
      expect(Number(first?.[2])).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});
