import { parse, stringify, validate, version } from 'uuid';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { uuidV7Ids } from '../src/deps.js';

/** The millisecond timestamp in a UUIDv7's first 48 bits. */
const msecsOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('uuidV7Ids', () => {
  afterEach(() => vi.restoreAllMocks());

  it('makes valid, distinct UUIDv7s carrying the current time, each after the one before', () => {
    const newId = uuidV7Ids();
    const before = Date.now();
    // Past several refills of the 4 KiB pool of random bytes (256 ids each).
    const ids = Array.from({ length: 5000 }, () => newId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
      // The text uuid itself writes for those bytes (lower-case, dashes in place).
      expect(stringify(parse(id))).toBe(id);
      expect(msecsOf(id)).toBeGreaterThanOrEqual(before);
      expect(msecsOf(id)).toBeLessThanOrEqual(after);
    }
    expect([...ids].sort()).toEqual(ids);
  });

  it('keeps ids of one millisecond in order, and keeps the order when the clock steps back', () => {
    const newId = uuidV7Ids();
    const now = vi.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
    const sameMillisecond = Array.from({ length: 1000 }, () => newId());
    expect(sameMillisecond.map(msecsOf)).toEqual(Array(1000).fill(1_800_000_000_000));
    expect([...sameMillisecond].sort()).toEqual(sameMillisecond);
    now.mockReturnValue(1_799_999_999_000);
    const afterStepBack = newId();
    expect(afterStepBack > (sameMillisecond.at(-1) as string)).toBe(true);
    now.mockReturnValue(1_800_000_000_001);
    const next = newId();
    expect(msecsOf(next)).toBe(1_800_000_000_001);
    expect(next > afterStepBack).toBe(true);
  });

  it('draws different random bits for each generator', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_800_000_000_000);
    expect(uuidV7Ids()()).not.toBe(uuidV7Ids()());
  });
});
