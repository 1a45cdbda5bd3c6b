import { normaliseDomain, normaliseEmail } from './ioc.js';

/**
 * Leaked data as it travels in text lines: combolists (`login<SEP>secret`) and stealer-log
 * credential lines (`url<SEP>login<SEP>password`). Each line becomes the record the API takes
 * (email or username, password or a hash, domain, extra), or a reason it cannot be read. Pure: the
 * import's reader thread and the API's text/plain body use the same functions.
 */

export type LineFormat = 'combo' | 'stealer';
export const COMBO_SEPARATORS = [':', ';', '|', '\t'] as const;
export const STEALER_SEPARATORS = [':', '|', ';', ' ', '\t'] as const;
export type Separator = (typeof COMBO_SEPARATORS)[number] | (typeof STEALER_SEPARATORS)[number];

/** A line read: the record it gives, or why it gives none. */
export type LineResult = { ok: true; record: Record<string, unknown> } | { ok: false; reason: string };

/** What a secret is: a plaintext password, or a hash of a known kind (kept as a hash, never as a password). */
export type SecretKind = 'plaintext' | 'sha1' | 'md5' | 'sha256' | 'bcrypt' | 'argon2';

const HEX = /^[0-9a-f]+$/i;
const BCRYPT = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;
const ARGON2 = /^\$argon2(?:id|i|d)\$/;

export function secretKind(secret: string): SecretKind {
  if (HEX.test(secret)) {
    if (secret.length === 40) return 'sha1';
    if (secret.length === 32) return 'md5';
    if (secret.length === 64) return 'sha256';
  }
  if (BCRYPT.test(secret)) return 'bcrypt';
  if (ARGON2.test(secret)) return 'argon2';
  return 'plaintext';
}

/**
 * The record fields of a leaked secret: a plaintext password as `password` (hashed and masked at
 * ingest, never stored), a SHA-1 as `password_sha1` (the pwned-passwords range serves it), any other
 * hash in `extra` as `password_hash` with its `hash_type`.
 */
function secretFields(secret: string, record: Record<string, unknown>, extra: Record<string, string>): void {
  if (!secret) return;
  const kind = secretKind(secret);
  if (kind === 'plaintext') record.password = secret;
  else if (kind === 'sha1') record.password_sha1 = secret.toLowerCase();
  else {
    extra.password_hash = kind === 'bcrypt' || kind === 'argon2' ? secret : secret.toLowerCase();
    extra.hash_type = kind;
  }
}

/** A login as the record's e-mail when it parses as one, else as its username. */
function loginFields(login: string, record: Record<string, unknown>): boolean {
  const email = normaliseEmail(login);
  if (email.ok) record.email = login;
  else record.username = login;
  return email.ok;
}

const MAX_LINE = 4096;

/** `login<SEP>secret`: the first separator splits, so a secret may hold the separator too. */
export function parseComboLine(line: string, separator: Separator): LineResult {
  if (line.length > MAX_LINE) return { ok: false, reason: `line longer than ${MAX_LINE} characters` };
  const at = line.indexOf(separator);
  if (at < 0) return { ok: false, reason: `no separator "${printable(separator)}"` };
  const login = line.slice(0, at).trim();
  const secret = line.slice(at + 1);
  if (!login) return { ok: false, reason: 'empty login' };
  if (/\s/.test(login)) return { ok: false, reason: 'login holds white space' };
  const record: Record<string, unknown> = {};
  const extra: Record<string, string> = {};
  loginFields(login, record);
  secretFields(secret.trim() === '' ? '' : secret, record, extra);
  if (Object.keys(extra).length) record.extra = extra;
  return { ok: true, record };
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const ANDROID = /^android:\/\/[^@/\s]*@([A-Za-z0-9._-]+)\/?/i;

/**
 * The URL at the start of a stealer-log line and what follows its separator. With `:` the URL's
 * own `://`, a port (`:8443`) and its path are part of it: it ends at the first `:` after them.
 */
function splitUrl(line: string, separator: Separator): { url: string; rest: string } | null {
  const scheme = SCHEME.exec(line);
  if (!scheme) return null;
  let i = scheme[0].length;
  if (separator === ':') {
    // The authority, up to its path or a colon: a colon with digits is a port when a path follows
    // it, or a login and a password still do.
    while (i < line.length && line[i] !== '/' && line[i] !== ':') i++;
    const port = /^:\d{1,5}(?=\/|:|$)/.exec(line.slice(i));
    if (port) {
      const after = line.slice(i + port[0].length);
      if (after.startsWith('/') || (after.match(/:/g)?.length ?? 0) >= 2) i += port[0].length;
    }
  }
  const end = line.indexOf(separator, i);
  if (end < 0) return null;
  return { url: line.slice(0, end), rest: line.slice(end + 1) };
}

/** The host of a URL, as a domain the record can keep (null for an IP address or a host that is no domain). */
function urlDomain(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return null;
  }
  if (!host || /^\[|^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return null;
  const n = normaliseDomain(host);
  return n.ok && n.value.includes('.') ? n.value : null;
}

/**
 * `url<SEP>login<SEP>password`, the credential lines of stealer logs. The URL's host becomes the
 * record's domain, even beside an e-mail login (a domain monitor of the site and one of the
 * e-mail's domain both match it), and the URL is kept in extra.url; an Android app
 * (`android://<hash>@com.app.name/`) is kept as extra.app.
 */
export function parseStealerLine(line: string, separator: Separator): LineResult {
  if (line.length > MAX_LINE) return { ok: false, reason: `line longer than ${MAX_LINE} characters` };
  const split = splitUrl(line, separator);
  if (!split) return { ok: false, reason: 'not a stealer-log line (url, login, password)' };
  const at = split.rest.indexOf(separator);
  if (at < 0) return { ok: false, reason: 'no password after the login' };
  const login = split.rest.slice(0, at).trim();
  const password = split.rest.slice(at + 1);
  if (!login) return { ok: false, reason: 'empty login' };
  if (/\s/.test(login)) return { ok: false, reason: 'login holds white space' };
  const record: Record<string, unknown> = {};
  const extra: Record<string, string> = {};
  loginFields(login, record);
  const android = ANDROID.exec(split.url);
  if (android?.[1]) {
    extra.app = android[1];
  } else {
    extra.url = split.url;
    const domain = urlDomain(split.url);
    if (domain) record.domain = domain;
  }
  secretFields(password.trim() === '' ? '' : password, record, extra);
  record.extra = extra;
  return { ok: true, record };
}

export function parseLine(format: LineFormat, line: string, separator: Separator): LineResult {
  return format === 'combo' ? parseComboLine(line, separator) : parseStealerLine(line, separator);
}

const printable = (s: string) => (s === '\t' ? '\\t' : s);

/**
 * The format and separator of a file from a sample of its lines (blank and comment lines left
 * out), or null when they read as neither. Stealer logs start with a URL; a combolist's separator is
 * the one after which most lines read as a login and a secret (`:` first on a tie).
 */
export function detectLineFormat(sample: readonly string[]): { format: LineFormat; separator: Separator } | null {
  const lines = sample.filter((l) => l.trim() !== '');
  if (lines.length === 0) return null;
  if (lines.filter((l) => SCHEME.test(l)).length * 2 >= lines.length) {
    const s = bestSeparator('stealer', lines);
    if (s.n * 2 >= lines.length) return { format: 'stealer', separator: s.separator };
  }
  const c = bestSeparator('combo', lines);
  return c.n * 2 >= lines.length ? { format: 'combo', separator: c.separator } : null;
}

/** The separator after which most of `lines` read as lines of `format` (the first on a tie), and how many do. */
export function bestSeparator(format: LineFormat, lines: readonly string[]): { separator: Separator; n: number } {
  let top: { separator: Separator; n: number } | null = null;
  for (const separator of format === 'combo' ? COMBO_SEPARATORS : STEALER_SEPARATORS) {
    const n = lines.filter((l) => {
      const r = parseLine(format, l, separator);
      return r.ok && (format === 'stealer' || typeof r.record.email === 'string' || r.record.password !== undefined);
    }).length;
    if (!top || n > top.n) top = { separator, n };
  }
  return top as { separator: Separator; n: number };
}

/** The lines of a sample that say something: not blank, not comments, not the last (the sample may cut it short). */
export function sampleLines(head: string): string[] {
  const lines = head.split(/\r?\n/);
  if (lines.length > 1) lines.pop();
  return lines.filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/** A line of a dump as read: its number from 1, its text, its bytes of input, and what it gives. */
export interface ReadLine {
  line: number;
  /** The line, or for one past MAX_LINE its first MAX_LINE characters (the rest was never held). */
  text: string;
  bytes: number;
  parsed: LineResult;
}

/** Lines that cannot be told apart as combolist or stealer-log lines, from the first that say something. */
export class UnknownLineFormat extends Error {
  constructor() {
    super('cannot tell combolist from stealer-log lines');
    this.name = 'UnknownLineFormat';
  }
}

/** What is sampled to tell the format and separator when they are not given: up to this much text, ... */
const SAMPLE_CHARS = 64 * 1024;
/** ... this many lines that say something, ... */
const SAMPLE_LINES = 200;
/** ... or lines read in all (over-long ones, which say nothing, included). */
const SAMPLE_READ = 10_000;

const tooLong = (): LineResult => ({ ok: false, reason: `line longer than ${MAX_LINE} characters` });

/**
 * Combolist or stealer-log lines as text arrives (UTF-8, cut anywhere): each whole line parsed,
 * numbered from 1 with blank and `#` lines counted but skipped, CR of CRLF dropped. The import's
 * reader thread and the API's text/plain body read through it.
 *
 * A line past MAX_LINE characters is rejected as it streams: its first MAX_LINE characters are
 * kept (for the rejects file), the rest counted and dropped, so memory stays flat and time linear
 * whatever a line's length. The format or separator not given are told from the first lines
 * (SAMPLE_*), which are held until then; `UnknownLineFormat` when they read as neither.
 */
export class DumpLines {
  private lineNo = 0;
  private carry = '';
  /** Bytes of the current line dropped past MAX_LINE (0: not past it). */
  private dropped = 0;
  private format: LineFormat | undefined;
  private separator: Separator | undefined;
  /** Lines read while the format or separator is still unknown; null once both are known. */
  private held: Array<{ line: number; text: string; bytes: number; long: boolean }> | null = null;
  private heldChars = 0;
  private heldMeaningful = 0;

  constructor(format?: LineFormat, separator?: Separator) {
    this.format = format;
    this.separator = separator;
    if (!format || !separator) this.held = [];
  }

  /** The lines `text` completes (every line left, with `final`). */
  *push(text: string, final = false): Generator<ReadLine> {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      yield* this.line(text.slice(start, nl), true);
      start = nl + 1;
    }
    const rest = text.slice(start);
    if (this.dropped) this.dropped += Buffer.byteLength(rest);
    else this.carry += rest;
    if (this.carry.length > MAX_LINE + 1) {
      // Too long already, wherever it ends: only its beginning is kept.
      this.dropped = Buffer.byteLength(this.carry) - Buffer.byteLength(this.carry.slice(0, MAX_LINE));
      this.carry = this.carry.slice(0, MAX_LINE);
    }
    if (final) {
      if (this.carry || this.dropped) yield* this.line('', false);
      yield* this.release();
    }
  }

  /**
   * The lines read so far that are whole, at the end of an input cut short (a stream that fails):
   * the held ones are given too (the format told from them), the line begun is dropped.
   */
  *drain(): Generator<ReadLine> {
    this.carry = '';
    this.dropped = 0;
    yield* this.release();
  }

  /** One line ended: `piece` is its last part, `newline` whether a newline ended it. */
  private *line(piece: string, newline: boolean): Generator<ReadLine> {
    const long = this.dropped > 0 || this.carry.length + piece.length > MAX_LINE + 1;
    let raw: string;
    let bytes: number;
    if (long) {
      const whole = this.dropped ? this.carry : this.carry + piece;
      raw = whole.slice(0, MAX_LINE);
      bytes = Buffer.byteLength(whole) + this.dropped + (this.dropped ? Buffer.byteLength(piece) : 0) + (newline ? 1 : 0);
    } else {
      raw = this.carry + piece;
      bytes = Buffer.byteLength(raw) + (newline ? 1 : 0);
    }
    this.carry = '';
    this.dropped = 0;
    this.lineNo++;
    const line = !long && raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!long && (line.trim() === '' || line.startsWith('#'))) return;
    if (this.held) {
      this.held.push({ line: this.lineNo, text: line, bytes, long });
      if (!long) {
        this.heldChars += line.length;
        this.heldMeaningful++;
      }
      if (this.heldChars >= SAMPLE_CHARS || this.heldMeaningful >= SAMPLE_LINES || this.held.length >= SAMPLE_READ) yield* this.release();
      return;
    }
    yield this.read(this.lineNo, line, bytes, long);
  }

  /** Tells the format and separator from the lines held, then gives them. */
  private *release(): Generator<ReadLine> {
    const held = this.held;
    if (!held) return;
    this.held = null;
    const sample = held.filter((h) => !h.long).map((h) => h.text);
    if (sample.length === 0 && held.length === 0) return;
    if (!this.format) {
      const found = detectLineFormat(sample);
      if (!found) throw new UnknownLineFormat();
      this.format = found.format;
    }
    this.separator ??= bestSeparator(this.format, sample).separator;
    for (const h of held) yield this.read(h.line, h.text, h.bytes, h.long);
  }

  private read(line: number, text: string, bytes: number, long: boolean): ReadLine {
    return { line, text, bytes, parsed: long ? tooLong() : parseLine(this.format as LineFormat, text, this.separator as Separator) };
  }

  /** The format and separator read with (told from the first lines when not given); undefined until told. */
  get told(): { format: LineFormat; separator: Separator } | undefined {
    return this.format && this.separator && !this.held ? { format: this.format, separator: this.separator } : undefined;
  }
}
