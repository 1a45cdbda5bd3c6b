import { getDomain } from 'tldts';
import type { FieldError } from './field-error.js';
import { normaliseCidr, normaliseDomain, normaliseEmail, normaliseIp, refang } from './ioc.js';

/** What a monitor watches for (API.md section 4). */
export const MONITOR_TYPES = ['domain', 'email', 'username', 'keyword', 'ip'] as const;
export type MonitorType = (typeof MONITOR_TYPES)[number];

export const MAX_TERMS = 500;
export const MIN_KEYWORD_LENGTH = 3;
const MAX_TERM_LENGTH = 253;

export type TermResult = { ok: true; value: string } | { ok: false; error: string };

/**
 * One term as the matcher compares it: domains lower-case with IDN as punycode and never a bare
 * public suffix (`com`, `co.uk`, `github.io`: the Public Suffix List, private suffixes included,
 * through tldts); e-mails normalised as leak records are; usernames and keywords lower-case
 * (matched ignoring case), keywords of MIN_KEYWORD_LENGTH characters at least; ip an address or a
 * CIDR range, canonical, IPv4-mapped IPv6 as IPv4. Defanged input (`evil[.]com`) is refanged.
 */
export function normaliseTerm(type: MonitorType, raw: string): TermResult {
  const input = raw.trim();
  if (!input) return { ok: false, error: 'must not be empty' };
  if (input.length > MAX_TERM_LENGTH) return { ok: false, error: `must be at most ${MAX_TERM_LENGTH} characters` };
  switch (type) {
    case 'domain': {
      const d = normaliseDomain(refang(input));
      if (!d.ok) return d;
      // A registrable domain (or a name under one): a bare suffix would match a whole TLD.
      if (getDomain(d.value, { allowPrivateDomains: true }) === null) {
        return { ok: false, error: 'is a public suffix (such as com, co.uk or github.io): name a domain registered under it' };
      }
      return d;
    }
    case 'email':
      return normaliseEmail(refang(input));
    case 'ip':
      return refang(input).includes('/') ? normaliseCidr(refang(input)) : normaliseIp(refang(input));
    case 'username':
      if (/\s/.test(input)) return { ok: false, error: 'must not hold white space' };
      return { ok: true, value: input.toLowerCase() };
    case 'keyword': {
      const keyword = input.replace(/\s+/g, ' ').toLowerCase();
      if ([...keyword].length < MIN_KEYWORD_LENGTH) return { ok: false, error: `must be at least ${MIN_KEYWORD_LENGTH} characters` };
      return { ok: true, value: keyword };
    }
  }
}

/**
 * A monitor's terms, each normalised for `type`, duplicates (after normalising) dropped, in the
 * order given; or the errors, one per bad term, named `terms.<index>`.
 */
export function normaliseTerms(type: MonitorType, terms: readonly string[]): { ok: true; terms: string[] } | { ok: false; errors: FieldError[] } {
  if (terms.length < 1 || terms.length > MAX_TERMS) return { ok: false, errors: [{ field: 'terms', message: `must hold 1 to ${MAX_TERMS} terms` }] };
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  terms.forEach((raw, i) => {
    const r = normaliseTerm(type, raw);
    if (r.ok) seen.add(r.value);
    else errors.push({ field: `terms.${i}`, message: r.error });
  });
  return errors.length ? { ok: false, errors } : { ok: true, terms: [...seen] };
}
