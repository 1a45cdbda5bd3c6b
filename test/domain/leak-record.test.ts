import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  type FullTextTerm,
  ftsQuery,
  ipKey,
  ipKeyRange,
  joinedWords,
  maskPassword,
  normaliseRecord,
  parseFullText,
  prefixEnd,
  recordKey,
  recordKeyHex,
  reverseDomain,
  textWords,
  tsQuery,
  tsQueryIndexed,
  wordPatterns,
} from '../../src/domain/leak-record.js';
import { csvRowToRecord, ndjsonItems, NdjsonLines } from '../../src/modules/leaks/input/index.js';
import { remembered } from '../../src/domain/ioc.js';

describe('leak records', () => {
  it.each([
    ['', '****'],
    ['abc', '****'],
    ['abcd', 'a**d'],
    ['hunter2', 'h*****2'],
    ['pässwörd', 'p******d'],
  ])('masks %j as %j', (pw, mask) => expect(maskPassword(pw)).toBe(mask));

  it('fingerprints the normalised record: the same person written differently is one record', () => {
    const a = normaliseRecord({ email: 'Alice@Example.com', password: 'x1', extra: { b: 1, a: true } });
    const b = normaliseRecord({ email: 'alice@example.com ', password: 'x1', extra: { a: 'true', b: '1' } });
    expect(a.ok && b.ok && a.record.fingerprint === b.record.fingerprint).toBe(true);
    const c = normaliseRecord({ email: 'alice@example.com', password: 'x2' });
    expect(a.ok && c.ok && a.record.fingerprint !== c.record.fingerprint).toBe(true);
  });

  it('derives the domain from the e-mail, keeps a given one, and refuses bad fields', () => {
    const r = normaliseRecord({ email: 'bob@Sub.Example.org', domain: 'Other.example' });
    expect(r.ok && r.record.domain).toBe('other.example');
    const d = normaliseRecord({ email: 'bob@Sub.Example.org' });
    expect(d.ok && d.record).toMatchObject({ domain: 'sub.example.org', domain_rev: 'org.example.sub.' });
    const bad = normaliseRecord({ email: 'x', ip: '1.2.3.999', phone: 'call me', leaked_at: 'yesterday', password_sha1: 'abc' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.map((e) => e.field).sort()).toEqual(['email', 'ip', 'leaked_at', 'password_sha1', 'phone']);
  });

  it('refuses a null character in any field, the password and extra keys or values', () => {
    const bad = normaliseRecord({ email: 'a\u0000@example.com', username: 'u\u0000', full_name: 'A\u0000B', password: 'p\u0000w', extra: { city: 'Pa\u0000ris', 'k\u0000': 'v' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.errors).toEqual([
        { field: 'email', message: 'null characters are not allowed' },
        { field: 'username', message: 'null characters are not allowed' },
        { field: 'full_name', message: 'null characters are not allowed' },
        { field: 'password', message: 'null characters are not allowed' },
        { field: 'extra.city', message: 'null characters are not allowed' },
        { field: 'extra.k\\u0000', message: 'key: null characters are not allowed' },
      ]);
    }
    expect(normaliseRecord({ email: 'a@example.com', username: 'u', extra: { city: 'Paris' } }).ok).toBe(true);
  });

  it('keys a record in its source: 4 bytes of SHA-256 over the source, 12 over the source and fingerprint', () => {
    const sha256 = (s: string) => createHash('sha256').update(s).digest();
    const expected = (source: string, fp: string) => Buffer.concat([sha256(source).subarray(0, 4), sha256(`${source}\n${fp}`).subarray(0, 12)]).toString('hex');
    const fp = 'ab'.repeat(32);
    // Sources in turn, so that the remembered prefix of the last source is replaced each time.
    for (const source of ['0192f1a0-0000-7000-8000-000000000001', '0192f1a0-0000-7000-8000-000000000002', '0192f1a0-0000-7000-8000-000000000001']) {
      expect(recordKeyHex(source, fp)).toBe(expected(source, fp));
      expect(recordKey(source, fp).toString('hex')).toBe(expected(source, fp));
    }
    expect(recordKey('s', fp)).toHaveLength(16);
  });

  it('keys IPs so a CIDR is a contiguous range, IPv4 inside the IPv6 space', () => {
    expect(ipKey('1.2.3.4')).toBe('00000000000000000000ffff01020304');
    expect(ipKeyRange('10.0.0.0/8')).toEqual(['00000000000000000000ffff0a000000', '00000000000000000000ffff0affffff']);
    expect(ipKeyRange('2001:db8::/32')).toEqual(['20010db8000000000000000000000000', '20010db8ffffffffffffffffffffffff']);
    expect(ipKeyRange('nonsense')).toBeNull();
    expect(reverseDomain('a.b.example.com')).toBe('com.example.b.a.');
  });

  it('joins a value\'s words as the Unicode split does, ASCII or not', () => {
    const values = ['Olga.Harris6915@corp11.example', 'A1B2--c3', '  ', '', '--', '2001:db8::1', '+1 (555) 010', 'Ünïcode Straße 12', 'İstanbul', '\u212Aelvin', '١٢٣abc', 'ｆｕｌｌ', 'x\u0000y\u007fz', 'tab\tnew\nline'];
    for (const v of values) expect(joinedWords(v), v).toBe(textWords(v).join(' '));
    // And 2,000 strings of any ASCII characters (a fixed pseudo-random sequence).
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      const v = String.fromCharCode(...Array.from({ length: next() % 24 }, () => next() % 128));
      expect(joinedWords(v), JSON.stringify(v)).toBe(textWords(v).join(' '));
    }
    expect(joinedWords('Olga.Harris6915@corp11.example')).toBe('olga harris 6915 corp 11 example');
  });

  it('turns q into safe full-text queries for both engines', () => {
    const terms = parseFullText('alice "John Smith" acme* OR) drop;--');
    expect(ftsQuery(terms)).toBe('"alice" AND "john smith" AND "acme"* AND "or" AND "drop"');
    expect(tsQuery(terms)).toBe("alice & (john <-> smith) & acme:* & or & drop");
    expect(parseFullText('*** "" ')).toEqual([]);
  });

  it('splits letters from digits, in records and in queries alike', () => {
    const r = normaliseRecord({ email: 'Olga.Harris6915@corp11.example', full_name: 'Olga Harris', username: 'o_harris' });
    // The e-mail's domain once: it is in the e-mail's words already.
    expect(r.ok && r.record.search_text).toBe('olga harris 6915 corp 11 example o harris olga harris');
    // A domain given apart from the e-mail's, or with no e-mail, is a value of its own.
    const other = normaliseRecord({ email: 'olga@corp11.example', domain: 'Mail.Corp11.Example' });
    expect(other.ok && other.record.search_text).toBe('olga corp 11 example mail corp 11 example');
    const alone = normaliseRecord({ username: 'olga', domain: 'corp11.example' });
    expect(alone.ok && alone.record.search_text).toBe('olga corp 11 example');
    const terms = parseFullText('harris6915 corp1* robins* "smith 12"');
    expect(terms).toEqual([
      { kind: 'phrase', words: ['harris', '6915'] },
      { kind: 'prefix', words: ['corp', '1'] },
      { kind: 'prefix', words: ['robins'] },
      { kind: 'phrase', words: ['smith', '12'] },
    ]);
    expect(ftsQuery(terms)).toBe('"harris 6915" AND "corp 1"* AND "robins"* AND "smith 12"');
    expect(tsQuery(terms)).toBe('(harris <-> 6915) & (corp <-> 1:*) & robins:* & (smith <-> 12)');
    // For an index on the expression: the phrases' words AND-ed, the phrases checked apart (prefixes as they were).
    expect(tsQueryIndexed(terms)).toEqual({ query: 'harris & 6915 & (corp <-> 1:*) & robins:* & smith & 12', phrases: [terms[0], terms[3]] });
    // The same terms checked in ' ' || search_text || ' ': whole words, a prefix open at its end.
    expect(wordPatterns(terms)).toEqual(['% harris 6915 %', '% corp 1%', '% robins%', '% smith 12 %']);
  });

  it('writes a prefix spelled out as its words OR-ed, each a phrase with the words before it (PostgreSQL; FTS5 keeps its prefix)', () => {
    const terms: FullTextTerm[] = [
      { kind: 'prefix', words: ['corp', '1'], completions: ['1', '11'] },
      { kind: 'prefix', words: ['rob'], completions: ['robin', 'robinson'] },
      { kind: 'prefix', words: ['zz'], completions: [] },
      { kind: 'word', words: ['smith'] },
    ];
    expect(ftsQuery(terms)).toBe('"corp 1"* AND "rob"* AND "zz"* AND "smith"');
    expect(tsQuery(terms)).toBe('((corp <-> 1) | (corp <-> 11)) & (robin | robinson) & zz:* & smith');
  });

  it('bounds the words that start with a prefix, in code point order', () => {
    expect(prefixEnd('jam')).toBe('jan');
    expect(prefixEnd('az')).toBe('a{');
    expect(prefixEnd('a\u{d7ff}')).toBe('a\u{e000}');
    expect(prefixEnd('a\u{fffd}')).toBe('a\u{fffe}');
    expect(prefixEnd('a\u{ffff}')).toBe('a\u{10000}');
    expect(prefixEnd('a\u{10ffff}')).toBeNull();
    expect(prefixEnd('')).toBeNull();
    for (const w of ['jam', 'james', 'jamz', 'jam\u{10000}x']) expect(w >= 'jam' && Buffer.compare(Buffer.from(w), Buffer.from(prefixEnd('jam') as string)) < 0).toBe(true);
    expect(Buffer.compare(Buffer.from('jan'), Buffer.from(prefixEnd('jam') as string))).toBe(0);
  });
});

describe('NDJSON reader', () => {
  it('yields one record per line across chunk boundaries, numbering malformed lines too', async () => {
    const stream = Readable.from([Buffer.from('{"a":1}\n{"a"'), Buffer.from(':2}\n\nnot json\n{"a":3}')]);
    const out = [];
    for await (const item of ndjsonItems(stream)) out.push(item);
    expect(out.map((o) => o.index)).toEqual([0, 1, 2, 3]);
    expect(out[1]!.value).toEqual({ a: 2 });
    expect(out[2]!.value).toHaveProperty('message', 'malformed JSON');
  });

  it('splits chunks synchronously: a line (or a UTF-8 character) cut between chunks, CRLF, a byte-order mark, a last line with no newline', () => {
    const text = Buffer.from('\ufeff{"n":"Zoë"}\r\n\n  \n{"n":"ä€𝄞"}\n{"n":3}');
    const lines = new NdjsonLines();
    const out: unknown[] = [];
    // One byte at a time: every boundary, including inside each multi-byte character.
    for (let i = 0; i < text.length; i++) out.push(...lines.push(text.subarray(i, i + 1)));
    out.push(...lines.end());
    expect(out).toEqual([{ n: 'Zoë' }, { n: 'ä€𝄞' }, { n: 3 }]);
    const whole = new NdjsonLines();
    expect([...whole.push(text), ...whole.end()]).toEqual(out);
    expect(new NdjsonLines().end()).toEqual([]);
  });

  it('stops with 413 past its byte limit, after the lines that end within it', async () => {
    // 8 bytes a line: lines 1 and 2 end within 20 bytes, the third does not.
    const stream = Readable.from([Buffer.from('{"a":1}\n'.repeat(10))]);
    const seen: unknown[] = [];
    await expect(async () => {
      for await (const { value } of ndjsonItems(stream, 20)) seen.push(value);
    }).rejects.toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(seen).toEqual([{ a: 1 }, { a: 1 }]);
    // Exactly at the limit: every line.
    const exact: unknown[] = [];
    for await (const { value } of ndjsonItems(Readable.from([Buffer.from('{"a":1}\n'.repeat(3))]), 24)) exact.push(value);
    expect(exact).toHaveLength(3);
  });
});

describe('remembered()', () => {
  it('computes once per input and forgets everything past its bound', () => {
    const calls: string[] = [];
    const upper = remembered((s: string) => (calls.push(s), s.toUpperCase()), 2);
    expect([upper('a'), upper('a'), upper('b'), upper('a')]).toEqual(['A', 'A', 'B', 'A']);
    expect(calls).toEqual(['a', 'b']);
    upper('c'); // a third input: the cache starts again
    upper('a');
    expect(calls).toEqual(['a', 'b', 'c', 'a']);
  });

  it('keeps repeated leaked_at values and domains right, valid or not', () => {
    for (let i = 0; i < 2; i++) {
      const ok = normaliseRecord({ email: 'A@Mail.Example.COM', leaked_at: '2019-02-15' });
      expect(ok.ok && [ok.record.leaked_at, ok.record.domain, ok.record.domain_rev]).toEqual(['2019-02-15T00:00:00.000Z', 'mail.example.com', 'com.example.mail.']);
      const bad = normaliseRecord({ email: 'a@example.com', leaked_at: '2019-13-45' });
      expect(!bad.ok && bad.errors).toEqual([{ field: 'leaked_at', message: 'must be an ISO 8601 date or timestamp' }]);
    }
  });
});

describe('CSV import mapping', () => {
  it('maps known columns to fields and the rest to extra', () => {
    expect(csvRowToRecord({ Email: 'a@example.com', password: 'pw', City: 'Paris', empty: '' })).toEqual({ email: 'a@example.com', password: 'pw', extra: { City: 'Paris' } });
  });
});
