import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fc, test as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { MAX_PATTERN_LENGTH, parsePattern, reducePattern } from '../../src/domain/stix-pattern/index.js';

describe('STIX patterns, parsed by the parser generated from STIXPattern.g4 (antlr-ng, antlr4ng)', () => {
  it('reduces one comparison of an observable with one value to that indicator, typed', () => {
    const cases: Array<[string, string, string]> = [
      ["[ipv4-addr:value = '198.51.100.7']", 'ipv4', '198.51.100.7'],
      ["[ipv4-addr:value = '198.51.100.0/24']", 'cidr', '198.51.100.0/24'],
      ["[ipv6-addr:value = '2001:db8::1']", 'ipv6', '2001:db8::1'],
      ["[domain-name:value = 'evil.example']", 'domain', 'evil.example'],
      ["[url:value = 'http://evil.example/it\\'s']", 'url', "http://evil.example/it's"],
      ["[email-addr:value = 'ceo@evil.example']", 'email', 'ceo@evil.example'],
      ["[file:hashes.MD5 = 'd41d8cd98f00b204e9800998ecf8427e']", 'md5', 'd41d8cd98f00b204e9800998ecf8427e'],
      ["[file:hashes.'SHA-1' = 'da39a3ee5e6b4b0d3255bfef95601890afd80709']", 'sha1', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
      ["[file:hashes.'SHA-256' = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855']", 'sha256', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      // Comments and spacing are the grammar's business.
      ["  [ /* the C2 */ domain-name:value\n=  'c2.example' ]  ", 'domain', 'c2.example'],
    ];
    for (const [pattern, type, value] of cases) expect(reducePattern(pattern), pattern).toMatchObject({ kind: 'single', type, value });
  });

  it('gives each pattern of a shape parsed before its own value (the parse reused, the tokens lexed each time)', () => {
    const values = ['203.0.113.1', '203.0.113.0/25', "it\\'s", '', '198.51.100.9'];
    for (const value of values) {
      const reduced = reducePattern(`[ipv4-addr:value = '${value}']`);
      const unescaped = value.replace(/\\(['\\])/g, '$1');
      expect(reduced, value).toEqual({ kind: 'single', type: value.includes('/') ? 'cidr' : 'ipv4', value: unescaped, comparison: { path: 'ipv4-addr:value', operator: '=', negated: false, values: [unescaped] } });
    }
    // The same tokens but another path, or one more comparison, are another shape.
    expect(reducePattern("[ipv6-addr:value = '2001:db8::2']")).toMatchObject({ kind: 'single', type: 'ipv6' });
    expect(reducePattern("[ipv4-addr:value = '203.0.113.1' OR ipv4-addr:value = '203.0.113.2']").kind).toBe('compound');
    expect(reducePattern("[ipv4-addr:value = '203.0.113.1'").kind).toBe('invalid');
  });

  it('keeps a pattern of more than one comparison whole, with each comparison', () => {
    const and = reducePattern("[file:name = 'invoice.exe' AND file:hashes.MD5 = 'd41d8cd98f00b204e9800998ecf8427e']");
    expect(and).toMatchObject({ kind: 'compound', observations: 1, qualified: false });
    expect(and.kind === 'compound' && and.comparisons.map((c) => [c.path, c.operator, c.values])).toEqual([
      ['file:name', '=', ['invoice.exe']],
      ['file:hashes.MD5', '=', ['d41d8cd98f00b204e9800998ecf8427e']],
    ]);
    const set = reducePattern("[ipv4-addr:value IN ('198.51.100.1', '198.51.100.2')]");
    expect(set.kind === 'compound' && set.comparisons[0]).toMatchObject({ path: 'ipv4-addr:value', operator: 'IN', values: ['198.51.100.1', '198.51.100.2'] });
    const sequence = reducePattern("[network-traffic:dst_ref.value = '203.0.113.9'] FOLLOWEDBY [file:name MATCHES '^stage2'] WITHIN 600 SECONDS");
    expect(sequence).toMatchObject({ kind: 'compound', observations: 2, qualified: true });
    // One comparison that is not an equality, or negated, or qualified, is no plain indicator either.
    expect(reducePattern("[ipv4-addr:value != '198.51.100.7']").kind).toBe('compound');
    expect(reducePattern("[ipv4-addr:value NOT = '198.51.100.7']").kind).toBe('compound');
    expect(reducePattern("[ipv4-addr:value = '198.51.100.7'] REPEATS 5 TIMES").kind).toBe('compound');
    expect(reducePattern("[windows-registry-key:key = 'HKLM\\\\Run']").kind).toBe('compound');
    expect(reducePattern("[x-custom:value = t'2026-11-29T10:00:00Z'] START t'2026-01-01T00:00:00Z' STOP t'2027-01-01T00:00:00Z'")).toMatchObject({ kind: 'compound', qualified: true });
  });

  it('says what is wrong with text that is no pattern, and never throws', () => {
    for (const text of ['', 'ipv4-addr:value = 1', "[ipv4-addr:value = '1.2.3.4'", "[ipv4-addr:value LIKES '1']", "[ipv4-addr:value = '1.2.3.4'] AND", '[]', "[a:b = 'x'] FOLLOWEDBY", 'ÿ', '\u0000']) {
      const reduced = reducePattern(text);
      expect(reduced.kind, JSON.stringify(text)).toBe('invalid');
      expect(reduced.kind === 'invalid' && reduced.errors.length).toBeGreaterThan(0);
    }
    expect(parsePattern('x'.repeat(MAX_PATTERN_LENGTH + 1)).errors).toEqual([`longer than ${MAX_PATTERN_LENGTH} characters`]);
  });

  it('runs the parser that antlr-ng generates from the grammar as it is now (npm run grammar)', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stix-grammar-'));
    try {
      execFileSync(process.execPath, [path.join(root, 'node_modules/antlr-ng/dist/cli/runner.js'), '-Dlanguage=TypeScript', '--generate-listener', 'false', '--generate-visitor', 'true', '-o', out, path.join(root, 'src/domain/stix-pattern/STIXPattern.g4')]);
      for (const file of ['STIXPatternLexer.ts', 'STIXPatternParser.ts', 'STIXPatternVisitor.ts']) {
        expect(fs.readFileSync(path.join(out, file), 'utf8'), file).toBe(fs.readFileSync(path.join(root, 'src/domain/stix-pattern/generated', file), 'utf8'));
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);

  prop.prop([fc.string({ maxLength: 200 })], { numRuns: 300 })('any text is reduced to one of the three answers, without an exception', (text) => {
    expect(['single', 'compound', 'invalid']).toContain(reducePattern(text).kind);
  });
  prop.prop([fc.constantFrom('ipv4-addr:value', 'domain-name:value', 'url:value', 'file:name'), fc.string({ maxLength: 40 })], { numRuns: 300 })('a quoted value comes back exactly as written, escapes undone', (path, value) => {
    const literal = `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
    const reduced = reducePattern(`[${path} = ${literal}]`);
    const values = reduced.kind === 'single' ? [reduced.value] : reduced.kind === 'compound' ? reduced.comparisons[0]?.values : reduced.errors;
    expect(values).toEqual([value]);
  });
});
