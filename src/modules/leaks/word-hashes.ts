/**
 * Sets of search words kept as 64-bit hashes in typed arrays, not as strings: an ingest checks every
 * word of every record against the words already in leak_words, and a Set of strings (each word
 * sliced out of its text first) kept the import's writer thread busy collecting garbage. Two words
 * whose hashes both match would count as one (63 bits: for a million words, about one chance in 20
 * million that any two do): the second would be left out of the vocabulary.
 */

/** The last word hashed (hashWord): two 32-bit hashes, read at once. */
const HASH = new Uint32Array(2);

/** The 32-bit finaliser of MurmurHash3: each input bit moves about half the output bits. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Hashes `text` from `start` to `end` (its UTF-16 units) into HASH: two hashes of different multipliers. */
function hashWord(text: string, start: number, end: number): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ (end - start);
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  HASH[0] = mix(a);
  // Never 0: a slot whose second hash is 0 is free.
  HASH[1] = mix(b) | 1;
}

/** An open-addressing set of hashed words (at most half full). */
export class WordHashes {
  private a: Uint32Array;
  private b: Uint32Array;
  private used = 0;

  constructor(private readonly initialSlots = 1024) {
    this.a = new Uint32Array(initialSlots);
    this.b = new Uint32Array(initialSlots);
  }

  get size(): number {
    return this.used;
  }

  /** Adds every word of `other`. */
  addAll(other: WordHashes): void {
    for (let i = 0; i < other.b.length; i++) if (other.b[i] !== 0) this.add(other.a[i] as number, other.b[i] as number);
  }

  clear(): void {
    this.a = new Uint32Array(this.initialSlots);
    this.b = new Uint32Array(this.initialSlots);
    this.used = 0;
  }

  /** The slot of a hash pair (hashWord), or -(the free slot where it would go) - 1. */
  find(h1: number, h2: number): number {
    const mask = this.b.length - 1;
    for (let i = h1 & mask; ; i = (i + 1) & mask) {
      if (this.b[i] === 0) return -i - 1;
      if (this.b[i] === h2 && this.a[i] === h1) return i;
    }
  }

  add(h1: number, h2: number): boolean {
    const at = this.find(h1, h2);
    if (at >= 0) return false;
    this.a[-at - 1] = h1;
    this.b[-at - 1] = h2;
    if (++this.used * 2 > this.b.length) this.grow();
    return true;
  }

  private grow(): void {
    const [a, b] = [this.a, this.b];
    this.a = new Uint32Array(b.length * 2);
    this.b = new Uint32Array(b.length * 2);
    this.used = 0;
    for (let i = 0; i < b.length; i++) if (b[i] !== 0) this.add(a[i] as number, b[i] as number);
  }
}

/**
 * Each word of `text` (words between single spaces; empty ones skipped) that is neither in `known`
 * nor in `seen` yet, once, onto `out`; those are added to `seen`. Only the new words are sliced out.
 */
export function newWords(text: string, known: WordHashes, seen: WordHashes, out: string[]): void {
  let start = 0;
  for (;;) {
    let end = text.indexOf(' ', start);
    if (end < 0) end = text.length;
    if (end > start) {
      hashWord(text, start, end);
      const h1 = HASH[0] as number;
      const h2 = HASH[1] as number;
      if (known.find(h1, h2) < 0 && seen.add(h1, h2)) out.push(text.slice(start, end));
    }
    if (end === text.length) return;
    start = end + 1;
  }
}
