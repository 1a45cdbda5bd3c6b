import { describe, expect, it } from 'vitest';
import { withSourceName } from '../../src/modules/leaks/leaks.shard-search.js';

/** A shard's record text as PostgreSQL's row_to_json writes it: the source's name null. */
const text = (extra: string) =>
  `{"id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","source":{"id":"0190a1b2-c3d4-7e5f-8a9b-111111111111","name":null},"email":"a@example.com","extra":${extra}}`;

describe('a shard record with its source name written in', () => {
  it('writes the name where row_to_json left null, the rest of the text as it was', () => {
    const out = withSourceName(text('{"n": 1.0, "t": "\\u00e9"}'), 'Collection #1 "2019" é');
    expect(out).toBe(
      '{"id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","source":{"id":"0190a1b2-c3d4-7e5f-8a9b-111111111111","name":"Collection #1 \\"2019\\" é"},"email":"a@example.com","extra":{"n": 1.0, "t": "\\u00e9"}}',
    );
    expect(JSON.parse(out).source).toEqual({ id: '0190a1b2-c3d4-7e5f-8a9b-111111111111', name: 'Collection #1 "2019" é' });
  });

  it('parses a text of another shape rather than write the name in the wrong place', () => {
    const other = '{"id":"x","source":{"id":"y","name":null},"email":null}';
    expect(JSON.parse(withSourceName(other, 'Named'))).toEqual({ id: 'x', source: { id: 'y', name: 'Named' }, email: null });
    expect(JSON.parse(withSourceName(text('{}'), null)).source.name).toBeNull();
  });
});
