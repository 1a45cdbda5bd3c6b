import { describe, expect, it } from 'vitest';
import { newWords, WordHashes } from '../../src/modules/leaks/word-hashes.js';

describe('WordHashes and newWords', () => {
  it('gives each word of a text once, in order, leaving out empty words and those known or seen', () => {
    const known = new WordHashes();
    const seen = new WordHashes();
    const out: string[] = [];
    newWords('alice', known, seen, out);
    known.addAll(seen);
    const inTransaction = new WordHashes();
    newWords('bob  alice carol bob', known, inTransaction, out);
    newWords(' dave carol ', known, inTransaction, out);
    expect(out).toEqual(['alice', 'bob', 'carol', 'dave']);
    expect(inTransaction.size).toBe(3);
    expect(known.size).toBe(1);
  });

  it('tells words apart that differ only in order, case or one character (UTF-16 units, not bytes)', () => {
    const out: string[] = [];
    const words = ['ab', 'ba', 'Ab', 'a', 'b', 'müller', 'muller', 'mÜller', '日本', '本日', 'a'.repeat(1000), `${'a'.repeat(999)}b`];
    newWords(words.join(' '), new WordHashes(), new WordHashes(), out);
    expect(out).toEqual(words);
  });

  it('keeps every word as it grows from a few slots, and forgets them all when cleared', () => {
    const set = new WordHashes(4);
    const words = Array.from({ length: 50_000 }, (_, i) => `w${i}`);
    const first: string[] = [];
    newWords(words.join(' '), new WordHashes(), set, first);
    expect(first).toHaveLength(50_000);
    const again: string[] = [];
    newWords(words.join(' '), set, new WordHashes(), again);
    expect(again).toEqual([]);
    set.clear();
    expect(set.size).toBe(0);
    newWords('w1 w2', set, new WordHashes(), again);
    expect(again).toEqual(['w1', 'w2']);
  });
});
