import { describe, expect, it } from 'vitest';
import { type NormalisedRecord, STORED_FIELDS } from '../../src/domain/leak-record.js';
import { copyChunks, RECORD_COLUMNS, recordValues } from '../../src/modules/leaks/leaks.record-rows.js';

describe('the leak record columns, from one list', () => {
  it('binds each stored field under its own column, the key for the fingerprint and extra as JSON', () => {
    const key = new Uint8Array(16).fill(7);
    const record = Object.fromEntries(STORED_FIELDS.map((f) => [f, `value of ${f}`])) as unknown as NormalisedRecord;
    record.extra = { a: '1' };
    record.key = key;
    const values = recordValues(record, 'the id', 'the source', 'the time');
    expect(values).toHaveLength(RECORD_COLUMNS.length);
    const byColumn = Object.fromEntries(RECORD_COLUMNS.map((c, i) => [c, values[i]]));
    expect(byColumn).toMatchObject({ id: 'the id', source_id: 'the source', created_at: 'the time', extra: '{"a":"1"}', fingerprint: key });
    for (const f of STORED_FIELDS) if (f !== 'extra' && f !== 'fingerprint') expect(byColumn[f], f).toBe(`value of ${f}`);
  });
});

describe('records in COPY text', () => {
  /** COPY's text format, spelled out value by value: what copyChunks writes straight into bytes. */
  const expected = (values: ReturnType<typeof recordValues>) =>
    values
      .map((v) => (v === null ? '\\N' : v instanceof Uint8Array ? `\\\\x${Buffer.from(v).toString('hex')}` : (v as string).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c] as string)))
      .join('\t');

  it('writes each value escaped, nulls as \\N, keys as hex, other scripts as UTF-8, a value longer than a chunk whole', () => {
    const texts = ['plain', 'tab\there', 'new\nline', 'cr\rhere', 'back\\slash', 'é ü 中文 😀', 'x'.repeat(300_000), '\\\t\n\r'.repeat(1000)];
    const records = Array.from({ length: 700 }, (_, i) => {
      const r = Object.fromEntries(STORED_FIELDS.map((f) => [f, i % 3 === 0 ? null : texts[(i + f.length) % texts.length]])) as unknown as NormalisedRecord;
      r.extra = { note: texts[i % texts.length] as string };
      r.search_text = texts[(i * 7) % texts.length] as string;
      r.fingerprint = 'unused: the key is written';
      return r;
    });
    const ids = records.map((_, i) => `id-${i}`);
    const keys = records.map((_, i) => new Uint8Array(16).fill(i % 256));
    const chunks = [...copyChunks(records, ids, keys, 'the source', 'the time')];
    expect(chunks.length).toBeGreaterThan(2);
    const want = records.map((r, i) => `${expected(recordValues(r, ids[i] as string, 'the source', 'the time', keys[i]))}\n`).join('');
    expect(Buffer.concat(chunks).toString('utf8')).toBe(want);
  });
});
