import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TERMS, MONITOR_TYPES, normaliseTerm, normaliseTerms } from '../../src/domain/monitor-terms.js';

const value = (type: Parameters<typeof normaliseTerm>[0], raw: string) => {
  const r = normaliseTerm(type, raw);
  return r.ok ? r.value : `error: ${r.error}`;
};

describe('monitor terms, validated and normalised per type', () => {
  it('domains: lower-case, IDN as punycode, refanged, never a bare public suffix (private suffixes included)', () => {
    expect(value('domain', ' Example.COM. ')).toBe('example.com');
    expect(value('domain', 'mail.corp[.]example.co.uk')).toBe('mail.corp.example.co.uk');
    expect(value('domain', 'bücher.de')).toBe('xn--bcher-kva.de');
    expect(value('domain', 'someone.github.io')).toBe('someone.github.io');
    for (const suffix of ['com', 'co.uk', 'github.io', 'COM', 'blogspot.com']) expect(value('domain', suffix), suffix).toMatch(/^error: (is a public suffix|must have at least two labels)/);
    expect(value('domain', 'co.uk')).toContain('public suffix');
    expect(value('domain', 'not a domain')).toMatch(/^error:/);
    expect(value('domain', '192.0.2.1')).toMatch(/^error:/);
  });

  it('e-mails as leak records store them; usernames and keywords lower-case; keywords of 3 characters at least', () => {
    expect(value('email', 'Alice@Bücher.DE')).toBe('alice@xn--bcher-kva.de');
    expect(value('email', 'alice')).toMatch(/^error:/);
    expect(value('username', 'JDoe')).toBe('jdoe');
    expect(value('username', 'j doe')).toMatch(/^error:/);
    expect(value('keyword', '  Project   Falcon ')).toBe('project falcon');
    expect(value('keyword', 'ab')).toBe('error: must be at least 3 characters');
    expect(value('keyword', 'abc')).toBe('abc');
  });

  it('ip: an address or a CIDR range, canonical, IPv4-mapped IPv6 as IPv4', () => {
    expect(value('ip', '203.0.113.7')).toBe('203.0.113.7');
    expect(value('ip', '::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(value('ip', '203.0.113.77/24')).toBe('203.0.113.0/24');
    expect(value('ip', '2001:DB8:0:0::1/48')).toBe('2001:db8::/48');
    expect(value('ip', '300.1.1.1')).toMatch(/^error:/);
    expect(value('ip', '10.0.0.0/33')).toMatch(/^error:/);
  });

  it('names each bad term terms.<index>, drops duplicates after normalising, and takes 1 to 500 terms', () => {
    expect(normaliseTerms('domain', ['example.com', 'co.uk', 'EXAMPLE.com', 'bad domain'])).toEqual({
      ok: false,
      errors: [
        { field: 'terms.1', message: expect.stringContaining('public suffix') },
        { field: 'terms.3', message: expect.any(String) },
      ],
    });
    expect(normaliseTerms('domain', ['example.com', 'EXAMPLE.com.', 'sub.example.com'])).toEqual({ ok: true, terms: ['example.com', 'sub.example.com'] });
    expect(normaliseTerms('keyword', [])).toMatchObject({ ok: false, errors: [{ field: 'terms' }] });
    expect(normaliseTerms('keyword', Array.from({ length: MAX_TERMS + 1 }, (_, i) => `word${i}`))).toMatchObject({ ok: false, errors: [{ field: 'terms' }] });
    expect(normaliseTerms('keyword', Array.from({ length: MAX_TERMS }, (_, i) => `word${i}`))).toMatchObject({ ok: true });
  });

  it('is idempotent: a normalised term normalises to itself, for any input of any type', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MONITOR_TYPES), fc.oneof(fc.domain(), fc.emailAddress(), fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 40 })), (type, raw) => {
        const once = normaliseTerm(type, raw);
        if (!once.ok) return;
        expect(normaliseTerm(type, once.value)).toEqual(once);
      }),
      { seed: 28, numRuns: 2000 },
    );
  });
});
