import { describe, expect, it } from 'vitest';
import type { RecordResult } from '../../src/domain/leak-record.js';
import { BatchBuilder, batchItems } from '../../src/cli/reader-batch.js';
import { normaliseRecord, recordKey, recordKeyHex } from '../../src/domain/leak-record.js';

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
      // The writer gets the key that the reader passed along.
      if (r.ok) r.record.key = recordKey('source', r.record.fingerprint);
      return r;
    });
    const keyOf = (r: (typeof results)[number]) => (r.ok ? recordKeyHex('source', r.record.fingerprint) : undefined);
    const builder = new BatchBuilder(40);
    results.forEach((r, i) => builder.add(r, 100 + i, keyOf(r)));
    expect(builder.count).toBe(5);
    expect(builder.inputBytes).toBe(510);
    // What crosses to the writer is a structured clone.
    const batch = structuredClone(builder.take());
    expect(builder.count).toBe(0);
    expect(builder.inputBytes).toBe(0);
    const items = [...batchItems(batch, true)];
    // The first item carries the batch's search words (see IngestItem.words), each once.
    const words = [...new Set(results.flatMap((r) => (r.ok ? r.record.search_text.split(' ') : [])))];
    expect(items).toEqual(results.map((result, i) => ({ index: 40 + i, result, bytes: 100 + i, pause: i === 4, ...(i === 0 ? { words } : {}) })));
    // Every field, with a distinct value in the first record: a field read from the wrong column fails here.
    const first = results[0];
    if (!first?.ok) throw new Error('expected a valid record');
    expect(Object.values(first.record).filter((v) => v !== null).length).toBe(18);
    // Each record's key is its own 16 bytes of the batch's buffer.
    const keys = items.flatMap((i) => (i.result.ok ? [Buffer.from(i.result.record.key as Uint8Array).toString('hex')] : []));
    expect(keys).toEqual(results.flatMap((r) => (r.ok ? [Buffer.from(r.record.key as Uint8Array).toString('hex')] : [])));
    expect(new Set(keys).size).toBe(3);
    expect([...batchItems(batch)].every((item) => !item.pause)).toBe(true);
    // The next batch numbers its items on from this one.
    builder.add(results[4] as (typeof results)[number], 7, keyOf(results[4] as (typeof results)[number]));
    expect([...batchItems(builder.take())].map((i) => i.index)).toEqual([45]);
  });

  it('grow the keys buffer past its first thousand records, and keep the keys of the batch taken', () => {
    const builder = new BatchBuilder();
    const made = Array.from({ length: 2500 }, (_, i) => {
      const r = normaliseRecord({ email: `user${i}@example.com` });
      if (!r.ok) throw new Error('expected a valid record');
      return { r, key: recordKeyHex('source', r.record.fingerprint) };
    });
    made.forEach(({ r, key }) => builder.add(r, 1, key));
    const batch = structuredClone(builder.take());
    expect(batch.keys.length).toBe(2500 * 16);
    const back = [...batchItems(batch)].map((i) => (i.result.ok ? Buffer.from(i.result.record.key as Uint8Array).toString('hex') : ''));
    expect(back).toEqual(made.map(({ key }) => key));
    // The next batch starts with an empty buffer of keys, not the last one's.
    builder.add(made[0]?.r as RecordResult, 1, made[0]?.key);
    expect(builder.take().keys.length).toBe(16);
  });

  it('send each search word once a read: a batch carries the words of its records no earlier batch sent', () => {
    const builder = new BatchBuilder();
    const add = (value: unknown) => {
      const r = normaliseRecord(value);
      builder.add(r, 1, r.ok ? recordKeyHex('source', r.record.fingerprint) : undefined);
    };
    add({ email: 'alice.smith@example.com', full_name: 'Alice Smith' });
    add({ email: 'bob.smith@example.com' });
    const first = structuredClone(builder.take());
    expect([...first.words].sort()).toEqual(['alice', 'bob', 'com', 'example', 'smith']);
    expect(batchItems(first)[0]?.words).toEqual(first.words);
    expect(batchItems(first)[1]?.words).toBeUndefined();
    add({ email: 'not an address' });
    add({ email: 'carol.smith@example.org' });
    const second = structuredClone(builder.take());
    expect([...second.words].sort()).toEqual(['carol', 'org']);
    // On the batch's first item even when that one was rejected: the batch's records follow it.
    expect(batchItems(second)[0]).toMatchObject({ result: { ok: false }, words: second.words });
    add({ email: 'alice.smith@example.com' });
    expect(builder.take().words).toEqual([]);
  });

  it('refuse a record without its key: the writer would have to make it', () => {
    const r = normaliseRecord({ email: 'a@example.com' });
    expect(() => new BatchBuilder().add(r, 1)).toThrow(/key/);
    expect(() => new BatchBuilder().add(r, 1, 'abcd')).toThrow(/key/);
    // A rejected item has none.
    expect(() => new BatchBuilder().add(normaliseRecord({ email: 'not an address' }), 1)).not.toThrow();
  });
});
