import { describe, expect, it } from 'vitest';
import { allSettledOrThrow } from '../../src/domain/promises.js';

describe('allSettledOrThrow', () => {
  it('gives the values in order', async () => {
    expect(await allSettledOrThrow([Promise.resolve(1), Promise.resolve('two')])).toEqual([1, 'two']);
  });

  it('throws the first failure only once every promise has settled', async () => {
    let release!: () => void;
    let slowDone = false;
    const slow = new Promise<void>((resolve) => (release = resolve)).then(() => {
      slowDone = true;
    });
    const all = allSettledOrThrow([Promise.reject(new Error('first')), slow, Promise.reject(new Error('second'))]);
    let thrown: unknown;
    const settled = all.catch((err: unknown) => (thrown = err));
    // The failures are known (every microtask has run), but the slow one still runs: nothing is thrown yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(thrown).toBeUndefined();
    release();
    await settled;
    expect(slowDone).toBe(true);
    expect((thrown as Error).message).toBe('first');
  });
});
