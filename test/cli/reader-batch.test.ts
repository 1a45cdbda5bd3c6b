import { describe, expect, it } from 'vitest';
import { BatchBuilder, batchItems } from '../../src/cli/reader-batch.js';
import { normaliseRecord, recordKeyHex } from '../../src/domain/leak-record.js';

describe('reader thread batches (columns)', () => {
  it('give the writer back every item as it was: index, bytes, every field of a record, and the rejections in place', () => {
    const inputs: unknown[] = [
      { email: 'Alice@Example.COM', username: 'Alice', password: 'hunter22', ip: '10.1.2.3', phone: '+1 (555) 010-9999', full_name: 'Alice Liddell', extra: { city: 'Oxford', year: 1865 }, leaked_at: '2020-01-02' },
      { email: 'not an address' },
      { username: 'bob', domain: 'bücher.example', password_sha1: 'A94A8FE5CCB19BA61C4C0873D391E987982FBBD3' },
      'not an object',
      { ip: '2001:db8::1' },
    ];
    const results = inputs.map((v) => {
      const r = normaliseRecord(v);
      if (r.ok) r.record.key = recordKeyHex('source', r.record.fingerprint);
      return r;
    });
    const builder = new BatchBuilder(40);
    results.forEach((r, i) => builder.add(r, 100 + i));
    expect(builder.count).toBe(5);
    expect(builder.inputBytes).toBe(510);
    // What crosses to the writer is a structured clone.
    const batch = structuredClone(builder.take());
    expect(builder.count).toBe(0);
    expect(builder.inputBytes).toBe(0);
    const items = [...batchItems(batch, true)];
    expect(items).toEqual(results.map((result, i) => ({ index: 40 + i, result, bytes: 100 + i, pause: i === 4 })));
    // Every field, with a distinct value in the first record: a field read from the wrong column fails here.
    const first = results[0];
    if (!first?.ok) throw new Error('expected a valid record');
    expect(Object.values(first.record).filter((v) => v !== null).length).toBe(16);
    expect([...batchItems(batch)].every((item) => !item.pause)).toBe(true);
    // The next batch numbers its items on from this one.
    builder.add(results[4] as (typeof results)[number], 7);
    expect([...batchItems(builder.take())].map((i) => i.index)).toEqual([45]);
  });
});
