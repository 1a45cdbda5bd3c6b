import { describe, expect, it } from 'vitest';
import { BlockCounter, type Take } from '../../src/runtime/counters.js';

/** A store whose answers the test releases by hand: nothing sleeps. */
function heldStore(limit: number) {
  let counted = 0;
  const asked: Array<{ want: number; answer: () => Promise<void> }> = [];
  const take = (_key: string, _limit: number, _windowMs: number, want: number) =>
    new Promise<Take>((resolve) => {
      asked.push({
        want,
        answer: async () => {
          const granted = Math.min(want, limit - counted);
          counted += granted;
          resolve({ granted, count: counted, resetMs: 60_000 });
          // What the answer sets off (the block taken ahead put ready) runs before the caller goes on.
          await Promise.resolve();
        },
      });
    });
  return { take, asked, counted: () => counted };
}

describe('BlockCounter', () => {
  it('asks for the next block while a quarter of the current one is left, so no hit waits for the store', async () => {
    const store = heldStore(100_000);
    const counter = new BlockCounter(store.take, () => 0);
    const first = counter.hit('k', 100_000, 60_000);
    expect(store.asked).toHaveLength(1);
    await store.asked[0]!.answer();
    expect(await first).toMatchObject({ count: 1, allowed: true });
    // Hits 2..48 spend the block; the 48th leaves 16 of 64 and asks for the next one.
    for (let i = 2; i <= 48; i++) await counter.hit('k', 100_000, 60_000);
    expect(store.asked.map((a) => a.want)).toEqual([64, 64]);
    // The store has not answered: the rest of the block is still spent without waiting.
    for (let i = 49; i <= 64; i++) expect(await counter.hit('k', 100_000, 60_000)).toMatchObject({ count: i, allowed: true });
    await store.asked[1]!.answer();
    // The 65th hit starts the block taken ahead, without another question.
    expect(await counter.hit('k', 100_000, 60_000)).toMatchObject({ count: 65, allowed: true });
    expect(store.asked).toHaveLength(2);
    expect(store.counted()).toBe(128);
  });

  it('waits for the block taken ahead when the current one runs out first, and takes no other', async () => {
    const store = heldStore(100_000);
    const counter = new BlockCounter(store.take, () => 0);
    const first = counter.hit('k', 100_000, 60_000);
    await store.asked[0]!.answer();
    await first;
    for (let i = 2; i <= 64; i++) await counter.hit('k', 100_000, 60_000);
    const waiting = counter.hit('k', 100_000, 60_000);
    expect(store.asked).toHaveLength(2);
    await store.asked[1]!.answer();
    expect(await waiting).toMatchObject({ count: 65, allowed: true });
    expect(store.asked).toHaveLength(2);
  });

  it('never takes ahead near the limit: the last hits are counted one by one, and never more than the limit', async () => {
    const store = heldStore(300);
    const counter = new BlockCounter(store.take, () => 0);
    let allowed = 0;
    for (let i = 0; i < 400; i++) {
      const hit = counter.hit('k', 300, 60_000);
      // Answer whatever was asked, as a store would.
      for (const a of store.asked.splice(0)) await a.answer();
      if ((await hit).allowed) allowed++;
    }
    expect(allowed).toBe(300);
    expect(store.counted()).toBe(300);
  });
});
