import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { parsed, readItems } from '../../src/modules/leaks/input/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-items-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The items read from `text` (as `format`), and the error that ended them, if any. */
async function readAll(text: string, format: 'csv' | 'json') {
  const file = path.join(dir, `f-${Math.random().toString(36).slice(2)}.${format}`);
  fs.writeFileSync(file, text);
  const items: unknown[] = [];
  try {
    for await (const { value } of readItems(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), format)) items.push(value);
    return { items, error: null };
  } catch (err) {
    return { items, error: err as Error };
  }
}

describe('import-leaks file parsing', () => {
  it('gives every item before a broken place in the file, then the error', async () => {
    const good = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ email: `u${i}@x.example` }));
    // Read in one chunk: a stream's own iterator gave none of the 3,000.
    const json = await readAll(`[${good.join(',')},{"email" "broken"},${good.join(',')}]`, 'json');
    expect(json.items).toHaveLength(3000);
    expect(json.items[2999]).toEqual({ email: 'u2999@x.example' });
    expect(json.error?.message).toMatch(/expected ':'/);

    const rows = Array.from({ length: 3000 }, (_, i) => `u${i}@x.example,pw${i}`);
    const csv = await readAll(`email,password\n${rows.join('\n')}\na@x.example,"x"y\n${rows.join('\n')}\n`, 'csv');
    expect(csv.items).toHaveLength(3000);
    expect(csv.error?.message).toMatch(/Invalid Closing Quote.*line 3002/);

    const whole = await readAll(`[${good.join(',')}]`, 'json');
    expect(whole).toMatchObject({ items: expect.any(Array), error: null });
    expect(whole.items).toHaveLength(3000);
  });

  it('reads the input only while few items wait, and closes it when the reader stops early', async () => {
    let chunksRead = 0;
    const input = Readable.from(
      (function* () {
        for (let c = 0; c < 50; c++) {
          chunksRead++;
          yield Buffer.from(`chunk ${c}`);
        }
      })(),
      { objectMode: false, highWaterMark: 1 },
    );
    // A "parser" that makes 600 items of each chunk.
    const parser = new Transform({
      readableObjectMode: true,
      transform(_chunk, _encoding, done) {
        for (let i = 0; i < 600; i++) this.push(i);
        done();
      },
    });
    let taken = 0;
    for await (const _ of parsed<number>(input, parser)) if (++taken === 10) break;
    // 1,000 items may wait: the input was read two chunks ahead (and what its stream holds), not to its end.
    expect(chunksRead).toBeGreaterThanOrEqual(2);
    expect(chunksRead).toBeLessThan(10);
    expect(input.destroyed).toBe(true);
    expect(parser.destroyed).toBe(true);
  });

  it('ends when the reader stops while the input waits for a slow parser to drain', async () => {
    const input = Readable.from(
      (function* () {
        for (let c = 0; c < 50; c++) yield Buffer.alloc(64 * 1024, 97);
      })(),
    );
    // Takes 20 ms a chunk: the feeder waits for 'drain', which a destroyed parser never emits.
    const parser = new Transform({
      readableObjectMode: true,
      transform(_chunk, _encoding, done) {
        this.push(1);
        setTimeout(done, 20);
      },
    });
    for await (const _ of parsed<number>(input, parser)) break;
    expect(parser.destroyed).toBe(true);
    expect(input.destroyed).toBe(true);
  }, 5000);
});
