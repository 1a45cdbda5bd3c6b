import { hash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { FieldError } from './field-error.js';
import { NUL_MESSAGE, normaliseCidr, normaliseDomain, normaliseEmail, normaliseIp, remembered } from './ioc.js';
import { ntlmHex } from './ntlm.js';

/** Leak records: validation, normalisation, fingerprints and search keys. Pure. */

export const DATA_CLASSES = ['email', 'username', 'password', 'ip', 'phone', 'name', 'address', 'dob', 'other'] as const;
export type DataClass = (typeof DATA_CLASSES)[number];

export const RECORD_FIELDS = ['email', 'username', 'domain', 'ip', 'phone', 'full_name', 'password', 'password_sha1', 'extra', 'leaked_at'] as const;
const FIELD_SET: ReadonlySet<string> = new Set(RECORD_FIELDS);

export interface NormalisedRecord {
  email: string | null;
  username: string | null;
  username_lower: string | null;
  domain: string | null;
  domain_rev: string | null;
  ip: string | null;
  ip_key: string | null;
  phone: string | null;
  full_name: string | null;
  password_sha1: string | null;
  password_masked: string | null;
  extra: Record<string, string>;
  leaked_at: string | null;
  /** SHA-256 (hex) of the record's content: the same record gives the same digest. See recordKey(). */
  fingerprint: string;
  /** recordKey(source, fingerprint), when the reader that normalised the record knew its source (the CLI's reader thread). */
  key?: Uint8Array;
  search_text: string;
  /**
   * The reversed domain of the e-mail address when it differs from `domain` (which the record gave
   * otherwise), else null: a domain monitor's scan reads it beside domain_rev, as its matcher does.
   */
  email_domain_rev: string | null;
  /** What the record exposes, as a severity (see recordSeverity). */
  severity: RecordSeverity;
  /** NTLM hash of a plaintext password (upper-case hex), for the NTLM range; null without one. */
  password_ntlm: string | null;
}

/**
 * The stored fields of a record, in the order they are stored and travel: the one list the insert
 * (leaks.repository.ts) and the import's reader thread (cli/reader-batch.ts) derive from. Its
 * `fingerprint` is stored as the record's key (recordKey).
 */
export const STORED_FIELDS = [
  'email',
  'username',
  'username_lower',
  'domain',
  'domain_rev',
  'ip',
  'ip_key',
  'phone',
  'full_name',
  'password_sha1',
  'password_masked',
  'extra',
  'leaked_at',
  'fingerprint',
  'search_text',
  'email_domain_rev',
  'severity',
  'password_ntlm',
] as const satisfies ReadonlyArray<keyof NormalisedRecord>;

// Every field of a record is stored (the key stands for the fingerprint): this fails to compile when one is added to NormalisedRecord only.
const everyField: Exclude<keyof NormalisedRecord, (typeof STORED_FIELDS)[number] | 'key'> extends never ? true : never = true;
void everyField;

/** The severity scale of records, alerts and incidents, lowest first. */
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type RecordSeverity = (typeof SEVERITIES)[number];

/**
 * What a record exposes, lowest first: low, no secret (an e-mail, a username, a phone number...);
 * medium, a password's hash only; high, a password leaked in plaintext; critical, a stealer-log
 * credential (a site's URL or an app, with its login and plaintext password).
 */
export function recordSeverity(r: Pick<NormalisedRecord, 'password_masked' | 'password_sha1' | 'extra'>): RecordSeverity {
  if (r.password_masked !== null) return r.extra.url !== undefined || r.extra.app !== undefined ? 'critical' : 'high';
  return r.password_sha1 !== null || r.extra.password_hash !== undefined ? 'medium' : 'low';
}

export type RecordResult = { ok: true; record: NormalisedRecord } | { ok: false; errors: FieldError[] };

/** First and last character kept, one `*` per character between; `****` below 4 characters. */
export function maskPassword(password: string): string {
  const chars = [...password];
  if (chars.length < 4) return '****';
  return `${chars[0]}${'*'.repeat(chars.length - 2)}${chars[chars.length - 1]}`;
}

// crypto.hash: one call instead of a Hash object each time, about half the cost for short inputs.
export const sha1Hex = (s: string) => hash('sha1', s, 'hex').toUpperCase();

/** "mail.example.com" -> "com.example.mail.": a domain and its subdomains share this prefix. */
/** The reversed domain of `email` when it is not `domain` itself (see NormalisedRecord.email_domain_rev). */
export function emailDomainRev(email: string | null, domain: string | null): string | null {
  if (!email) return null;
  const at = email.slice(email.lastIndexOf('@') + 1);
  return at && at !== domain ? reverseDomain(at) : null;
}

export function reverseDomain(domain: string): string {
  return `${domain.split('.').reverse().join('.')}.`;
}

/**
 * The reversed-domain keys of a (normalised) domain and its subdomains: from "com.example." up to,
 * not including, "com.example/" ('/' follows '.').
 */
export function domainKeyRange(domain: string): { from: string; below: string } {
  const from = reverseDomain(domain);
  return { from, below: `${from.slice(0, -1)}/` };
}

const reversedDomain = remembered(reverseDomain);

/** A leaked_at value as an ISO 8601 timestamp; null when it is not a date or timestamp. */
const leakedAtIso = remembered((value: string): string | null => {
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
});

/** 32 hex digits of the 16-byte address; IPv4 as IPv4-mapped IPv6, so both families sort in one space. */
export function ipKey(ip: string): string {
  // Canonical dotted IPv4 (the common case) without a parse.
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) return `00000000000000000000ffff${v4.slice(1).map((o) => Number(o).toString(16).padStart(2, '0')).join('')}`;
  const addr = ipaddr.parse(ip);
  const v6 = addr.kind() === 'ipv4' ? (addr as ipaddr.IPv4).toIPv4MappedAddress() : (addr as ipaddr.IPv6);
  return Buffer.from(v6.toByteArray()).toString('hex');
}

/** [first, last] ip keys of a CIDR range (or of one address). */
export function ipKeyRange(value: string): [string, string] | null {
  if (!value.includes('/')) {
    const n = normaliseIp(value);
    return n.ok ? [ipKey(n.value), ipKey(n.value)] : null;
  }
  const c = normaliseCidr(value);
  if (!c.ok) return null;
  const [net, bitsText] = c.value.split('/') as [string, string];
  const bits = Number(bitsText) + (net.includes(':') ? 0 : 96);
  const first = Buffer.from(ipKey(net), 'hex');
  const last = Buffer.from(first);
  for (let bit = bits; bit < 128; bit++) last[bit >> 3]! |= 0x80 >> (bit & 7);
  return [first.toString('hex'), last.toString('hex')];
}

export function normalisePhone(raw: string): string | null {
  const trimmed = raw.trim();
  const digits = trimmed.replace(/\D/g, '');
  if (!/^\+?[\d\s().\-/]+$/.test(trimmed) || digits.length < 6 || digits.length > 20) return null;
  return `${trimmed.startsWith('+') ? '+' : ''}${digits}`;
}

/**
 * The words full-text search sees in a value: runs of letters or of digits, lower-cased
 * ("Harris6915@corp11.example" -> harris 6915 corp 11 example). Splitting letters from digits
 * keeps the vocabulary small: `harri*` then expands to a few words (harris, harrison) with long
 * lists of records, rather than to thousands of words like harris6915 with a record or two
 * each, which is what made prefix searches slow. Queries are split the same way.
 */
export function textWords(value: string): string[] {
  return value.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? [];
}

/**
 * textWords(value) joined by spaces. Values in ASCII (nearly all of a leak) are split in one pass
 * over their characters, in half the time of the Unicode regular expression, which the rest take.
 */
export function joinedWords(value: string): string {
  const lower = value.toLowerCase();
  let out = '';
  // What the characters since `start` are: 0 neither letters nor digits, 1 letters, 2 digits.
  let kind = 0;
  let start = 0;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if (c >= 128) return textWords(value).join(' ');
    const k = c >= 97 && c <= 122 ? 1 : c >= 48 && c <= 57 ? 2 : 0;
    if (k !== kind) {
      if (kind !== 0) out += out ? ` ${lower.slice(start, i)}` : lower.slice(start, i);
      start = i;
      kind = k;
    }
  }
  return out;
}

/** Each value's words in order (so phrases match within a value), a value repeating another's left out. */
function words(...values: Array<string | null | undefined>): string {
  const out = new Set<string>();
  for (const v of values) {
    const w = v ? joinedWords(v) : '';
    if (w) out.add(w);
  }
  return [...out].join(' ');
}

const HEX40 = /^[0-9a-fA-F]{40}$/;

/** Validates and normalises one ingested record; every problem is reported, by field. */
export function normaliseRecord(input: unknown): RecordResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ field: 'record', message: 'must be a JSON object' }] };
  }
  const rec = input as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const key of Object.keys(rec)) {
    if (!FIELD_SET.has(key)) errors.push({ field: key, message: 'unknown field' });
  }
  const str = (field: string, max: number): string | null => {
    const v = rec[field];
    if (v === undefined || v === null || v === '') return null;
    if (typeof v !== 'string') {
      errors.push({ field, message: 'must be a string' });
      return null;
    }
    if (v.length > max) {
      errors.push({ field, message: `must be at most ${max} characters` });
      return null;
    }
    if (v.includes('\u0000')) {
      errors.push({ field, message: NUL_MESSAGE });
      return null;
    }
    return v.trim() || null;
  };

  let email = str('email', 320);
  if (email) {
    const n = normaliseEmail(email);
    if (n.ok) email = n.value;
    else {
      errors.push({ field: 'email', message: 'must be a valid e-mail address' });
      email = null;
    }
  }
  const username = str('username', 256);
  let domain = str('domain', 253);
  if (domain) {
    const n = normaliseDomain(domain);
    if (n.ok) domain = n.value;
    else {
      errors.push({ field: 'domain', message: n.error });
      domain = null;
    }
  } else if (email) {
    domain = email.slice(email.lastIndexOf('@') + 1);
  }
  let ip = str('ip', 64);
  if (ip) {
    const n = normaliseIp(ip);
    if (n.ok) ip = n.value;
    else {
      errors.push({ field: 'ip', message: 'must be an IPv4 or IPv6 address' });
      ip = null;
    }
  }
  let phone = str('phone', 40);
  if (phone) {
    const n = normalisePhone(phone);
    if (!n) errors.push({ field: 'phone', message: 'must be a phone number of 6 to 20 digits' });
    phone = n;
  }
  const fullName = str('full_name', 256);

  let sha1: string | null = null;
  let masked: string | null = null;
  let ntlm: string | null = null;
  const password = rec.password;
  if (password !== undefined && password !== null && password !== '') {
    if (typeof password !== 'string') errors.push({ field: 'password', message: 'must be a string' });
    else if (password.length > 1024) errors.push({ field: 'password', message: 'must be at most 1024 characters' });
    else if (password.includes('\u0000')) errors.push({ field: 'password', message: NUL_MESSAGE });
    else {
      sha1 = sha1Hex(password);
      masked = maskPassword(password);
      ntlm = ntlmHex(password);
    }
  }
  const givenSha1 = rec.password_sha1;
  if (givenSha1 !== undefined && givenSha1 !== null && givenSha1 !== '') {
    if (typeof givenSha1 !== 'string' || !HEX40.test(givenSha1)) errors.push({ field: 'password_sha1', message: 'must be 40 hexadecimal characters' });
    else if (sha1 && sha1 !== givenSha1.toUpperCase()) errors.push({ field: 'password_sha1', message: 'does not match password' });
    else sha1 = givenSha1.toUpperCase();
  }

  const extra: Record<string, string> = {};
  if (rec.extra !== undefined && rec.extra !== null) {
    if (typeof rec.extra !== 'object' || Array.isArray(rec.extra)) errors.push({ field: 'extra', message: 'must be an object of strings, numbers and booleans' });
    else {
      const entries = Object.entries(rec.extra as Record<string, unknown>);
      if (entries.length > 50) errors.push({ field: 'extra', message: 'must have at most 50 keys' });
      for (const [k, v] of entries) {
        if (k.length === 0 || k.length > 64) errors.push({ field: `extra.${k}`, message: 'key must be 1-64 characters' });
        else if (k.includes('\u0000')) errors.push({ field: `extra.${k.replaceAll('\u0000', '\\u0000')}`, message: `key: ${NUL_MESSAGE}` });
        else if (typeof v === 'string') {
          if (v.length > 2048) errors.push({ field: `extra.${k}`, message: 'must be at most 2048 characters' });
          else if (v.includes('\u0000')) errors.push({ field: `extra.${k}`, message: NUL_MESSAGE });
          else extra[k] = v;
        }
        else if (typeof v === 'number' && Number.isFinite(v)) extra[k] = String(v);
        else if (typeof v === 'boolean') extra[k] = String(v);
        else errors.push({ field: `extra.${k}`, message: 'must be a string, number or boolean' });
      }
    }
  }

  let leakedAt: string | null = null;
  const leaked = rec.leaked_at;
  if (leaked !== undefined && leaked !== null && leaked !== '') {
    leakedAt = typeof leaked === 'string' ? leakedAtIso(leaked) : null;
    if (!leakedAt) errors.push({ field: 'leaked_at', message: 'must be an ISO 8601 date or timestamp' });
  }

  if (!email && !username && !ip && !phone && !errors.some((e) => ['email', 'username', 'ip', 'phone'].includes(e.field))) {
    errors.push({ field: 'record', message: 'needs at least one of email, username, ip, phone' });
  }
  if (errors.length) return { ok: false, errors };

  const sortedExtra = Object.keys(extra)
    .sort()
    .map((k) => [k, extra[k]]);
  const fingerprint = hash('sha256', JSON.stringify([email, username, ip, phone, fullName, sha1, sortedExtra]), 'hex');
  return {
    ok: true,
    record: {
      email,
      username,
      username_lower: username?.toLowerCase() ?? null,
      domain,
      domain_rev: domain ? reversedDomain(domain) : null,
      ip,
      ip_key: ip ? ipKey(ip) : null,
      phone,
      full_name: fullName,
      password_sha1: sha1,
      password_masked: masked,
      extra,
      leaked_at: leakedAt,
      fingerprint,
      // The domain of the e-mail address is in its words already, in the same order.
      search_text: words(email, username, email?.endsWith(`@${domain}`) ? null : domain, ip, phone, fullName, ...Object.values(extra)),
      email_domain_rev: emailDomainRev(email, domain),
      severity: recordSeverity({ password_masked: masked, password_sha1: sha1, extra }),
      password_ntlm: ntlm,
    },
  };
}

/**
 * The stored key of a record in a source, 16 bytes: the first 4 bytes of SHA-256 over the source id,
 * then the first 12 of SHA-256 over the source id, a line feed and the record's content fingerprint.
 * One unique index on it makes re-ingesting idempotent per source. It is a third the size of one on
 * (source id, hex digest), and the source's prefix keeps one source's keys together, so a load into
 * a source touches its own part of the index only: both keep its pages in cache while a large
 * corpus is loaded. Within a source, 96 bits of digest: a collision is out of reach.
 * Migration 0007 and the SQLite function `leak_record_key` compute the same.
 */
export function recordKey(sourceId: string, fingerprint: string): Buffer {
  return Buffer.from(recordKeyHex(sourceId, fingerprint), 'hex');
}

/**
 * recordKey() in hex, as the CLI's reader thread makes it (and writes it into its batch's buffer of
 * keys, see reader-batch.ts). Made from hex digests: crypto.hash gives hex in about half the time it
 * gives a Buffer, and no Buffer is made per record.
 */
export function recordKeyHex(sourceId: string, fingerprint: string): string {
  // Imports run source by source: the last source's prefix is remembered.
  if (lastPrefix?.sourceId !== sourceId) lastPrefix = { sourceId, prefix: hash('sha256', sourceId, 'hex').slice(0, 8) };
  return lastPrefix.prefix + hash('sha256', `${sourceId}\n${fingerprint}`, 'hex').slice(0, 24);
}
let lastPrefix: { sourceId: string; prefix: string } | undefined;

/** What the data classes are read from: a normalised record, or a stored row (extra as JSON text). */
export type ClassedRecord = Pick<NormalisedRecord, 'email' | 'username' | 'password_sha1' | 'ip' | 'phone' | 'full_name'> & { extra: string | Record<string, string> };

/** Extra fields present: an object with a key, or stored JSON other than `{}`. */
function hasExtra(extra: string | Record<string, string>): boolean {
  if (typeof extra === 'string') return extra !== '{}' && extra !== '';
  for (const _ in extra) return true;
  return false;
}

/** Each data class a record can carry, with the test that says it does (in DATA_CLASSES order), for the statistics. */
export const DATA_CLASS_TESTS: ReadonlyArray<readonly [DataClass, (r: ClassedRecord) => boolean]> = [
  ['email', (r) => Boolean(r.email)],
  ['username', (r) => Boolean(r.username)],
  ['password', (r) => Boolean(r.password_sha1)],
  ['ip', (r) => Boolean(r.ip)],
  ['phone', (r) => Boolean(r.phone)],
  ['name', (r) => Boolean(r.full_name)],
  ['other', (r) => hasExtra(r.extra)],
];

export interface FullTextTerm {
  kind: 'word' | 'prefix' | 'phrase';
  /** A prefix term of several words ("corp1*" is corp then 1*) is a phrase whose last word is a prefix. */
  words: string[];
  /**
   * A prefix term's last word spelled out: the words of the records that start with it (see
   * LeaksService.expandPrefixes, PostgreSQL). Empty: nothing matches.
   */
  completions?: string[];
}

/**
 * The first string after every string that starts with `prefix`, in code point (UTF-8 byte)
 * order: `prefix` with its last character's successor. Null when there is none (U+10FFFF).
 */
export function prefixEnd(prefix: string): string | null {
  const chars = [...prefix];
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return null;
  return chars.join('') + String.fromCodePoint(last + 1 === 0xd800 ? 0xe000 : last + 1);
}

/** `q` as AND-ed terms: words, `prefix*`, `"a phrase"`; only letters and digits survive, so nothing reaches the engine's syntax. */
export function parseFullText(q: string): FullTextTerm[] {
  const terms: FullTextTerm[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(q); m; m = re.exec(q)) {
    if (m[1] !== undefined) {
      const ws = textWords(m[1]);
      if (ws.length) terms.push({ kind: 'phrase', words: ws });
      continue;
    }
    const raw = m[2] as string;
    const ws = textWords(raw);
    if (ws.length === 0) continue;
    if (raw.endsWith('*') && /[\p{L}\p{N}]\*+$/u.test(raw)) terms.push({ kind: 'prefix', words: ws });
    else terms.push({ kind: ws.length > 1 ? 'phrase' : 'word', words: ws });
  }
  return terms.slice(0, 20);
}

/**
 * PostgreSQL, for the full-text index on an expression: each phrase's words AND-ed in the tsquery
 * (a phrase operator makes the index recheck every match by computing its row's vector again),
 * and the phrases themselves, to be matched in search_text (wordPatterns). Prefix terms stay as
 * tsQuery writes them.
 */
export function tsQueryIndexed(terms: FullTextTerm[]): { query: string; phrases: FullTextTerm[] } {
  const phrase = (t: FullTextTerm) => t.kind === 'phrase' && t.words.length > 1;
  const query = terms.map((t) => (phrase(t) ? t.words.join(' & ') : tsQuery([t]))).join(' & ');
  return { query, phrases: terms.filter(phrase) };
}

/**
 * Each term as a LIKE pattern of ' ' || search_text || ' ': the same matches as the full-text
 * index finds (words of letters or of digits, one space apart), checked in a row without computing
 * its vector. Words hold no LIKE wildcard.
 */
export function wordPatterns(terms: FullTextTerm[]): string[] {
  return terms.map((t) => `% ${t.words.join(' ')}${t.kind === 'prefix' ? '' : ' '}%`);
}

/** The words of a prefix term with each completion of its last word. */
function completed(t: FullTextTerm, completions: string[]): string[][] {
  return completions.map((c) => [...t.words.slice(0, -1), c]);
}

/**
 * SQLite FTS5 query: terms AND-ed, a prefix as FTS5's own (SQLite gains nothing from spelling
 * prefixes out, see LeaksService.expandPrefixes, so completions are not used here).
 */
export function ftsQuery(terms: FullTextTerm[]): string {
  return terms.map((t) => `"${t.words.join(' ')}"${t.kind === 'prefix' ? '*' : ''}`).join(' AND ');
}

/** PostgreSQL tsquery: terms AND-ed, phrases with <->, a completed prefix as its phrases OR-ed. */
export function tsQuery(terms: FullTextTerm[]): string {
  const phrase = (ws: string[]) => (ws.length > 1 ? `(${ws.join(' <-> ')})` : (ws[0] as string));
  return terms
    .map((t) => {
      if (t.kind === 'prefix' && t.completions?.length) return `(${completed(t, t.completions).map(phrase).join(' | ')})`;
      return phrase(t.kind === 'prefix' ? [...t.words.slice(0, -1), `${t.words.at(-1)}:*`] : t.words);
    })
    .join(' & ');
}
