import { describe, expect, it } from 'vitest';
import { type NormalisedRecord, STORED_FIELDS } from '../../src/domain/leak-record.js';
import { RECORD_COLUMNS, recordValues } from '../../src/modules/leaks/leaks.record-rows.js';

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
