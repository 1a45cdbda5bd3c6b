import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DumpLines, type ReadLine } from '../../src/domain/dump-lines.js';
import { Utf8Lines } from '../../src/domain/text-lines.js';
import { MAX_NDJSON_LINE_BYTES, NdjsonLines, openInput } from '../../src/modules/leaks/input/index.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, type TestApp } from '../helpers/build-app.js';

/** `n` bytes of `byte`, handed out in chunks of `chunk` bytes (as a socket or a file would). */
function* repeated(byte: string, n: number, chunk = 64 * 1024): Generator<Buffer> {
  const piece = Buffer.alloc(chunk, byte);
  for (let left = n; left > 0; left -= chunk) yield left >= chunk ? piece : piece.subarray(0, left);
}

describe('one endless line', () => {
  it('is handed on in pieces by Utf8Lines, never held past its bound, cut between characters', () => {
    const lines = new Utf8Lines(1000);
    const euro = Buffer.from('€'.repeat(400));
    let out = Buffer.alloc(0);
    // 1,200 bytes of three-byte characters with no newline: past the bound, a piece comes out.
    for (let i = 0; i < 3; i++) out = Buffer.concat([out, lines.push(euro.subarray(i * 400, (i + 1) * 400))]);
    expect(out.length).toBeGreaterThan(0);
    expect(out.length % 3).toBe(0);
    expect(out.toString('utf8')).toBe('€'.repeat(out.length / 3));
    out = Buffer.concat([out, lines.push(Buffer.from('\nnext\n')), lines.end()]);
    expect(out.toString('utf8')).toBe(`${'€'.repeat(400)}\nnext\n`);
    expect(lines.windows1252Lines).toBe(0);
  });

  it('is one rejected line to DumpLines, counted in bytes, and the lines after it are read', () => {
    const lines = new DumpLines('combo', ':');
    const read: ReadLine[] = [];
    let total = 0;
    for (const chunk of repeated('A', 5_000_000)) {
      total += chunk.length;
      read.push(...lines.push(chunk.toString('latin1')));
    }
    read.push(...lines.push('\nalice@example.com:a password\n', true));
    expect(read.map((l) => [l.line, l.parsed.ok])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(read[0]).toMatchObject({ bytes: total + 1, parsed: { ok: false, reason: 'line longer than 4096 characters' } });
    expect(read[0]?.text).toHaveLength(4096);
  });

  it('is one rejected record to NdjsonLines, and the lines after it are read', () => {
    const lines = new NdjsonLines();
    const values: unknown[] = [];
    const sizes: number[] = [];
    values.push(...lines.push(Buffer.from('{"email": "'), sizes));
    for (const chunk of repeated('a', MAX_NDJSON_LINE_BYTES * 3)) values.push(...lines.push(chunk, sizes));
    values.push(...lines.push(Buffer.from('@example.com"}\n{"email": "bob@example.com"}\n'), sizes));
    expect(values).toHaveLength(2);
    expect(values[0]).toMatchObject({ message: `line longer than ${MAX_NDJSON_LINE_BYTES} bytes` });
    expect(values[1]).toEqual({ email: 'bob@example.com' });
    expect(sizes[0]).toBe(11 + MAX_NDJSON_LINE_BYTES * 3 + 15);
  });

  it('tells the format from the lines after an over-long first line', async () => {
    const body = Readable.from([...repeated('x', 200_000), Buffer.from('\nalice@example.com:pw1\nbob@example.com:pw2\n')]);
    const items = [];
    for await (const read of openInput(body, { among: ['combo', 'stealer'] })) items.push(...read);
    expect(items.map((i) => [i.index, i.result.ok])).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
  });
});

describe('ingesting one endless line over HTTP', () => {
  let t: TestApp;
  let staff: User;
  let source: string;

  beforeAll(async () => {
    t = await buildTestApp();
    staff = (await t.createOrg('enterprise', 'long-lines', true)).owner;
    source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Long lines', kind: 'combolist' } })).id;
  });
  afterAll(() => t.close());

  it('rejects a 50 MB combolist line as it streams and stores the line after it', async () => {
    const payload = Readable.from([...repeated('A', 50_000_000, 1024 * 1024), Buffer.from('\ncarol@example.com:a long password\n')]);
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, headers: { 'content-type': 'text/plain' }, payload });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({ accepted: 1, rejected: [{ index: 1, errors: [{ field: 'line', message: 'line longer than 4096 characters' }] }] });
  });

  it('rejects a 50 MB NDJSON line as it streams and stores the record after it', async () => {
    const payload = Readable.from([Buffer.from('{"email":"'), ...repeated('b', 50_000_000, 1024 * 1024), Buffer.from('"}\n{"email":"dave@example.com"}\n')]);
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, headers: { 'content-type': 'application/x-ndjson' }, payload });
    expect(res.statusCode, res.body).toBe(200);
    expect(json(res)).toMatchObject({ accepted: 1, rejected: [{ index: 0, errors: [{ field: 'record', message: `line longer than ${MAX_NDJSON_LINE_BYTES} bytes` }] }] });
  });
});
