import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { type IocType, normaliseIoc, normaliseIp, refang } from '../../src/domain/ioc.js';

// [type, input, expected normalised value | null when it must be refused]
const CASES: Array<[IocType, string, string | null]> = [
  ['ipv4', '192.0.2.1', '192.0.2.1'],
  ['ipv4', ' 192.0.2.1 ', '192.0.2.1'],
  ['ipv4', '1.2.3[.]4', '1.2.3.4'],
  ['ipv4', '1[.]2[.]3[.]4', '1.2.3.4'],
  ['ipv4', '1(.)2(.)3(.)4', '1.2.3.4'],
  ['ipv4', '10[dot]0[dot]0[dot]1', '10.0.0.1'],
  ['ipv4', '256.1.1.1', null],
  ['ipv4', '1.2.3', null],
  ['ipv4', '0x7f.0.0.1', null],
  ['ipv4', '1.2.3.4/24', null],
  ['ipv4', '2001:db8::1', null],
  ['ipv6', '2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
  ['ipv6', '2001:0db8::0001', '2001:db8::1'],
  ['ipv6', '2001:db8[:]:1', '2001:db8::1'],
  ['ipv6', '::ffff:192.0.2.1', '::ffff:192.0.2.1'],
  ['ipv6', '::FFFF:C000:0201', '::ffff:192.0.2.1'],
  ['ipv6', 'fe80::1::2', null],
  ['ipv6', '192.0.2.1', null],
  ['cidr', '10.1.2.3/8', '10.0.0.0/8'],
  ['cidr', '192.0.2.0/24', '192.0.2.0/24'],
  ['cidr', '2001:DB8::/32', '2001:db8::/32'],
  ['cidr', '192.0.2[.]0/24', '192.0.2.0/24'],
  ['cidr', '10.0.0.0/33', null],
  ['cidr', '10.0.0.0', null],
  ['cidr', '10.0.0.0/abc', null],
  ['domain', 'Evil.COM', 'evil.com'],
  ['domain', 'evil[.]com', 'evil.com'],
  ['domain', 'www.evil.com.', 'www.evil.com'],
  ['domain', 'bücher.example', 'xn--bcher-kva.example'],
  ['domain', 'müller[.]de', 'xn--mller-kva.de'],
  ['domain', 'localhost', null],
  ['domain', '-bad.com', null],
  ['domain', 'bad-.com', null],
  ['domain', 'under_score.com', null],
  ['domain', '1.2.3.4', null],
  ['domain', 'a'.repeat(64) + '.com', null],
  ['url', 'hxxp://evil[.]com', 'http://evil.com'],
  ['url', 'hxxps://evil[.]com/path?q=1', 'https://evil.com/path?q=1'],
  ['url', 'hXXp[:]//evil[.]com/a', 'http://evil.com/a'],
  ['url', 'HTTP://EVIL.COM/Path', 'http://evil.com/Path'],
  ['url', 'http://evil.com', 'http://evil.com'],
  ['url', 'http://bücher.example/x', 'http://xn--bcher-kva.example/x'],
  ['url', 'fxp://files[.]evil[.]com/drop', 'ftp://files.evil.com/drop'],
  ['url', 'http://evil.com:8080/x', 'http://evil.com:8080/x'],
  ['url', 'evil.com/path', null],
  ['url', 'http://', null],
  ['url', 'http://exa mple.com', null],
  ['email', 'Bob@Evil.COM', 'bob@evil.com'],
  ['email', 'bob[@]evil[.]com', 'bob@evil.com'],
  ['email', 'bob(at)evil(dot)com', 'bob@evil.com'],
  ['email', 'bob@bücher.example', 'bob@xn--bcher-kva.example'],
  ['email', 'bob', null],
  ['email', 'bob@localhost', null],
  ['email', '@evil.com', null],
  ['email', 'a..b@evil.com', null],
  ['md5', 'D41D8CD98F00B204E9800998ECF8427E', 'd41d8cd98f00b204e9800998ecf8427e'],
  ['md5', 'd41d8cd98f00b204e9800998ecf8427', null],
  ['md5', 'g41d8cd98f00b204e9800998ecf8427e', null],
  ['sha1', 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
  ['sha1', 'da39a3ee', null],
  ['sha256', 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['sha256', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85', null],
  ['sha512', 'A'.repeat(128), 'a'.repeat(128)],
  ['sha512', 'a'.repeat(127), null],
  ['filename', 'invoice.pdf.exe', 'invoice.pdf.exe'],
  ['filename', 'report[1].docm', 'report[1].docm'],
  ['filename', 'C:\\Windows\\evil.dll', null],
  ['filename', '../etc/passwd', null],
  ['filename', 'a\nb', null],
  ['cve', 'cve-2024-12345', 'CVE-2024-12345'],
  ['cve', 'CVE-2021-44228', 'CVE-2021-44228'],
  ['cve', 'CVE-21-1', null],
  ['cve', 'CVE-2021-123', null],
  ['asn', 'AS64500', 'AS64500'],
  ['asn', 'as64500', 'AS64500'],
  ['asn', '64500', 'AS64500'],
  ['asn', 'AS0', null],
  ['asn', 'AS99999999999', null],
  ['asn', 'ASX', null],
  ['other', 'Mutex: Global\\xyz', 'Mutex: Global\\xyz'],
  ['other', '   ', null],
];

describe('IOC validation and normalisation', () => {
  it.each(CASES)('%s %j -> %j', (type, input, expected) => {
    const r = normaliseIoc(type, input);
    if (expected === null) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/\w/);
    } else {
      expect(r).toEqual({ ok: true, value: expected });
    }
  });

  it('covers every type with at least one valid and one invalid case (but other)', () => {
    const types = new Set(CASES.map(([t]) => t));
    expect(types.size).toBe(14);
    for (const t of types) {
      expect(CASES.some(([tt, , e]) => tt === t && e !== null), t).toBe(true);
      expect(CASES.some(([tt, , e]) => tt === t && e === null), t).toBe(true);
    }
  });
});

describe('IPv4 addresses already canonical', () => {
  it('are taken as they are, exactly when the full parse agrees', () => {
    const full = (v: string) => (ipaddr.IPv4.isValidFourPartDecimal(v) ? ipaddr.IPv4.parse(v).toString() : null);
    const inputs = ['0.0.0.0', '255.255.255.255', '192.0.2.1', '10.0.0.10', '1.2.3.256', '256.1.1.1', '999.1.1.1', '01.2.3.4', '1.2.3.04', '1.2.3', '1.2.3.4.5', '1..2.3', '+1.2.3.4', '1.2.3.4 ', '１.2.3.4', '0x1.2.3.4', '1000.1.1.1'];
    for (const v of inputs) {
      const n = normaliseIp(v);
      expect(n.ok ? n.value : null, v).toBe(full(v.trim()));
    }
  });
});

describe('refang', () => {
  it.each([
    ['hxxp://evil[.]com', 'http://evil.com'],
    ['hxxps[:]//evil[.]com', 'https://evil.com'],
    ['h**p://x[.]y', 'http://x.y'],
    ['evil{.}com', 'evil.com'],
    ['evil\\.com', 'evil.com'],
    ['user[at]evil[dot]com', 'user@evil.com'],
    ['http[://]evil.com', 'http://evil.com'],
    ['plain.example', 'plain.example'],
  ])('%s -> %s', (input, out) => {
    expect(refang(input)).toBe(out);
  });
});
