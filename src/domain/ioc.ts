import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/**
 * U+0000 in any text a client sends: PostgreSQL's text cannot store it, so it is refused on every
 * backend alike, with Django REST Framework's CharField message.
 */
export const NUL_MESSAGE = 'null characters are not allowed';

/**
 * Indicators of compromise: validation, normalisation and refanging, pure and shared by incidents,
 * monitoring and tracking tokens.
 */
export const IOC_TYPES = [
  'ipv4',
  'ipv6',
  'cidr',
  'domain',
  'url',
  'email',
  'md5',
  'sha1',
  'sha256',
  'sha512',
  'filename',
  'cve',
  'asn',
  'other',
] as const;
export type IocType = (typeof IOC_TYPES)[number];

export type Normalised = { ok: true; value: string } | { ok: false; error: string };

const ok = (value: string): Normalised => ({ ok: true, value });
const fail = (error: string): Normalised => ({ ok: false, error });

/**
 * Undoes the usual defanging: `hxxp://`, `[.]`, `(.)`, `{.}`, `[dot]`, `[:]`, `[://]`, `[@]`,
 * `(at)`, `[at]`, `\.`. Only applied to network-ish types, where brackets cannot be meant literally.
 */
export function refang(input: string): string {
  return input
    .trim()
    .replace(/^h(?:xx|\*\*|tt)p(s?)(?=\[?:)/i, 'http$1')
    .replace(/^fxp(s?)(?=\[?:)/i, 'ftp$1')
    .replace(/\[:\/\/\]/g, '://')
    .replace(/\[:\]/g, ':')
    .replace(/\[\.\]|\(\.\)|\{\.\}|\[dot\]|\(dot\)|\{dot\}|\\\./gi, '.')
    .replace(/\[@\]|\(@\)|\{@\}|\[at\]|\(at\)|\{at\}/gi, '@');
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A pure function of a string, its results kept for inputs seen again: a leak repeats the same
 * few domains and dates millions of times. Forgets everything once `max` inputs are held.
 */
export function remembered<T>(fn: (input: string) => T, max = 10_000): (input: string) => T {
  const cache = new Map<string, T>();
  return (input) => {
    let out = cache.get(input);
    if (out === undefined) {
      if (cache.size >= max) cache.clear();
      out = fn(input);
      cache.set(input, out);
    }
    return out;
  };
}

/** A hostname of two or more labels, lower-case, IDN as punycode, no trailing dot. */
export const normaliseDomain = remembered(normaliseDomainOnce);

function normaliseDomainOnce(input: string): Normalised {
  let host = input.trim().replace(/\.$/, '');
  if (!host || host.length > 253) return fail('must be a domain name such as example.com');
  if (/[^\x00-\x7f]/.test(host)) {
    const ascii = domainToASCII(host);
    if (!ascii) return fail('is not a valid internationalised domain name');
    host = ascii;
  }
  host = host.toLowerCase();
  const labels = host.split('.');
  if (labels.length < 2) return fail('must have at least two labels, such as example.com');
  if (!labels.every((l) => LABEL.test(l))) return fail('must be a domain name such as example.com');
  if (/^\d+$/.test(labels[labels.length - 1] as string)) return fail('must be a domain name, not an IP address');
  return ok(host);
}

const CANONICAL_IPV4 = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

export function normaliseIp(input: string, family?: 'ipv4' | 'ipv6'): Normalised {
  const v = input.trim();
  if (v.includes('/')) return fail('must be a single address (use type cidr for ranges)');
  if (family === 'ipv4' || (!family && !v.includes(':'))) {
    // Already canonical (four parts of 0-255 with no leading zeros), as nearly every address in a leak is.
    const parts = CANONICAL_IPV4.exec(v);
    if (parts && parts.every((p, i) => i === 0 || Number(p) <= 255)) return ok(v);
    // Four decimal parts only: no octal, hex or shortened forms that parse to surprising addresses.
    if (!ipaddr.IPv4.isValidFourPartDecimal(v)) return fail('must be an IPv4 address such as 192.0.2.1');
    return ok(ipaddr.IPv4.parse(v).toString());
  }
  if (!ipaddr.IPv6.isValid(v)) return fail('must be an IPv6 address such as 2001:db8::1');
  const addr = ipaddr.IPv6.parse(v.replace(/%.*$/, ''));
  if (addr.isIPv4MappedAddress()) {
    const v4 = addr.toIPv4Address().toString();
    // A bare address shows as IPv4; an explicit ipv6 keeps RFC 5952's mixed notation.
    return ok(family ? `::ffff:${v4}` : v4);
  }
  return ok(addr.toRFC5952String());
}

/** An address or CIDR range, canonical, IPv4-mapped IPv6 shown as IPv4; a range is reduced to its network address. */
export function normaliseCidr(input: string): Normalised {
  const v = input.trim();
  if (!v.includes('/')) return fail('must be a CIDR range such as 192.0.2.0/24');
  const [addrPart, bitsPart] = v.split('/') as [string, string];
  if (!/^\d{1,3}$/.test(bitsPart)) return fail('must be a CIDR range such as 192.0.2.0/24');
  const addr = normaliseIp(addrPart);
  if (!addr.ok) return fail('must be a CIDR range such as 192.0.2.0/24');
  const bits = Number(bitsPart);
  const isV4 = !addr.value.includes(':');
  if (bits > (isV4 ? 32 : 128)) return fail(`prefix length must be at most ${isV4 ? 32 : 128}`);
  const network = isV4
    ? ipaddr.IPv4.networkAddressFromCIDR(`${addr.value}/${bits}`).toString()
    : ipaddr.IPv6.networkAddressFromCIDR(`${addr.value}/${bits}`).toRFC5952String();
  return ok(`${network}/${bits}`);
}

export function normaliseEmail(input: string): Normalised {
  const v = input.trim();
  const at = v.lastIndexOf('@');
  if (at < 1 || at === v.length - 1) return fail('must be an e-mail address such as user@example.com');
  const local = v.slice(0, at);
  if (local.length > 64 || /[\s<>(),;:"[\]\\]/.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return fail('must be an e-mail address such as user@example.com');
  }
  const domain = normaliseDomain(v.slice(at + 1));
  if (!domain.ok) return fail('must be an e-mail address such as user@example.com');
  return ok(`${local.toLowerCase()}@${domain.value}`);
}

const URL_PARTS = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\s]+)([^\s]*)$/i;

/** Scheme and host lower-cased (host as punycode); the rest kept as written: nothing added, no trailing slash. */
export function normaliseUrl(input: string): Normalised {
  const m = URL_PARTS.exec(input.trim());
  if (!m) return fail('must be an absolute URL such as http://example.com/path');
  const [, scheme = '', authority = '', rest = ''] = m;
  let parsed: URL;
  try {
    parsed = new URL(`${scheme}://${authority}${rest}`);
  } catch {
    return fail('must be an absolute URL such as http://example.com/path');
  }
  if (!parsed.hostname) return fail('must have a host');
  const userinfo = authority.includes('@') ? authority.slice(0, authority.lastIndexOf('@') + 1) : '';
  const host = parsed.host; // lower-case, punycode, IPv6 bracketed, default port dropped
  return ok(`${scheme.toLowerCase()}://${userinfo}${host}${rest}`);
}

const HASH_LENGTHS = { md5: 32, sha1: 40, sha256: 64, sha512: 128 } as const;

/** Validates and normalises `value` as an IOC of `type`. */
export function normaliseIoc(type: IocType, raw: string): Normalised {
  if (typeof raw !== 'string' || raw.trim() === '') return fail('must not be empty');
  if (raw.length > 4096) return fail('must be at most 4096 characters');
  const value = raw.trim();
  switch (type) {
    case 'ipv4':
    case 'ipv6':
      return normaliseIp(refang(value), type);
    case 'cidr':
      return normaliseCidr(refang(value));
    case 'domain':
      return normaliseDomain(refang(value));
    case 'url':
      return normaliseUrl(refang(value));
    case 'email':
      return normaliseEmail(refang(value));
    case 'md5':
    case 'sha1':
    case 'sha256':
    case 'sha512': {
      const n = HASH_LENGTHS[type];
      return new RegExp(`^[0-9a-f]{${n}}$`, 'i').test(value) ? ok(value.toLowerCase()) : fail(`must be ${n} hexadecimal characters`);
    }
    case 'filename':
      if (value.length > 255) return fail('must be at most 255 characters');
      if (/[\x00-\x1f\x7f/\\]/.test(value)) return fail('must be a file name without path separators or control characters');
      return ok(value);
    case 'cve':
      return /^CVE-\d{4}-\d{4,}$/i.test(value) ? ok(value.toUpperCase()) : fail('must be a CVE id such as CVE-2024-12345');
    case 'asn': {
      const m = /^(?:AS)?\s*(\d{1,10})$/i.exec(value);
      const n = m ? Number(m[1]) : 0;
      if (!m || n < 1 || n > 4294967295) return fail('must be an AS number such as AS64500');
      return ok(`AS${n}`);
    }
    case 'other':
      return ok(value);
  }
}
