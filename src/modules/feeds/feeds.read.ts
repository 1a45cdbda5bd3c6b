import { parse } from 'csv-parse/sync';
import ipaddr from 'ipaddr.js';
import { type IocType, normaliseIoc } from '../../domain/ioc.js';
import { TLP_MARKINGS } from '../../domain/stix.js';
import { reducePattern } from '../../domain/stix-pattern/index.js';
import { TLPS } from './feeds.schemas.js';

/** An indicator as a feed gave it, its value normalised. `stix-pattern` holds a pattern kept whole. */
export interface Candidate {
  type: string;
  value: string;
  stix_id: string | null;
  name: string | null;
  confidence: number | null;
  tlp: string | null;
  labels: string[];
  valid_until: string | null;
  modified: string | null;
  revoked: boolean;
}

/** What one document of a feed holds: its indicators, and what could not be read (the first examples kept). */
export interface Read {
  objects: number;
  candidates: Candidate[];
  rejected: number;
  examples: string[];
}

/** A fault of the whole document (not JSON, not a bundle, over a limit): nothing of it is applied. */
export class FeedProblem extends Error {}

export const MAX_EXAMPLES = 5;
export const STIX_PATTERN = 'stix-pattern';

/** TLP 1.0 and 2.0 marking definitions (STIX 2.1 and its TLP 2.0 extension), by id. */
const TLP_BY_ID = new Map<string, string>([
  ...Object.entries(TLP_MARKINGS).map(([tlp, m]) => [m.id, tlp] as [string, string]),
  ['marking-definition--613f2e26-407d-48c7-9eca-b8e91df99dc9', 'clear'],
  ['marking-definition--34098fce-860f-48ae-8e50-ebd3cc5e41da', 'green'],
  ['marking-definition--f88d31f6-486f-44da-b317-01333bde0b82', 'amber'],
  ['marking-definition--5e57c739-391a-4eb3-b6be-7d15ca92d5ed', 'red'],
]);
/** TLPs from the least strict to the most. */
export const TLP_ORDER: readonly string[] = TLPS;

/** A document being read: its indicators, and its rejects with the first examples. */
export class Reading implements Read {
  objects = 0;
  candidates: Candidate[] = [];
  rejected = 0;
  examples: string[] = [];

  reject(what: string) {
    this.rejected++;
    if (this.examples.length < MAX_EXAMPLES) this.examples.push(what.slice(0, 300));
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A STIX timestamp as stored (ISO 8601, milliseconds, Z), or null when it is none. */
const isoOf = (v: unknown): string | null => {
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? null : new Date(t).toISOString();
};

/** A bundle's own TLP marking definitions (name TLP:..., or definition {tlp}), beside the well-known ids. */
function markingsOf(objects: Array<Record<string, unknown>>): Map<string, string> {
  const found = new Map(TLP_BY_ID);
  for (const o of objects) {
    if (o.type !== 'marking-definition' || typeof o.id !== 'string') continue;
    const name = str(o.name) ?? str((o.definition as { tlp?: unknown } | undefined)?.tlp) ?? '';
    const tlp = name.replace(/^TLP:/i, '').toLowerCase().replace('white', 'clear');
    if (TLP_ORDER.includes(tlp)) found.set(o.id, tlp);
  }
  return found;
}

/**
 * A STIX 2.1 bundle's indicators: each `indicator` whose pattern is STIX, reduced by the parser
 * (one comparison: that typed value, normalised as an IOC is; more: the pattern whole). Its
 * strictest TLP marking, confidence, labels, valid_until, modified and revoked go with it.
 */
export function readStixBundle(body: Buffer, maxObjects: number): Read {
  let bundle: unknown;
  try {
    bundle = JSON.parse(body.toString('utf8'));
  } catch {
    throw new FeedProblem('the answer is not JSON');
  }
  if (!bundle || typeof bundle !== 'object' || (bundle as { type?: unknown }).type !== 'bundle' || !Array.isArray((bundle as { objects?: unknown }).objects)) {
    throw new FeedProblem('the answer is not a STIX bundle (type "bundle" with objects)');
  }
  const objects = (bundle as { objects: unknown[] }).objects;
  if (objects.length > maxObjects) throw new FeedProblem(`the bundle holds ${objects.length} objects, more than the ${maxObjects} a pull reads`);
  return readStixObjects(objects);
}

/** Indicators of a list of STIX objects (a bundle's, or a TAXII envelope's). */
export function readStixObjects(objects: unknown[]): Read {
  const out = new Reading();
  const records = objects.filter((o): o is Record<string, unknown> => Boolean(o) && typeof o === 'object' && !Array.isArray(o));
  const tlps = markingsOf(records);
  out.objects = objects.length;
  for (const [index, o] of objects.entries()) {
    if (!o || typeof o !== 'object' || Array.isArray(o)) {
      out.reject(`object ${index}: not a STIX object`);
      continue;
    }
    const object = o as Record<string, unknown>;
    if (object.type !== 'indicator') continue;
    const id = str(object.id) ?? `object ${index}`;
    const pattern = str(object.pattern);
    if ((object.pattern_type ?? 'stix') !== 'stix' || pattern === null) {
      out.reject(`${id}: pattern_type ${String(object.pattern_type)} is not stix`);
      continue;
    }
    const reduced = reducePattern(pattern);
    if (reduced.kind === 'invalid') {
      out.reject(`${id}: not a STIX pattern (${reduced.errors[0]})`);
      continue;
    }
    let type = STIX_PATTERN;
    let value = pattern.trim();
    if (reduced.kind === 'single') {
      const normalised = reduced.type === 'user-agent' ? userAgent(reduced.value) : normaliseIoc(reduced.type as IocType, reduced.value);
      if (!normalised.ok) {
        out.reject(`${id}: ${reduced.type} ${normalised.error}`);
        continue;
      }
      type = reduced.type;
      value = normalised.value;
    }
    const markings = Array.isArray(object.object_marking_refs) ? object.object_marking_refs.map((m) => tlps.get(String(m))).filter((t): t is string => Boolean(t)) : [];
    const confidence = typeof object.confidence === 'number' && object.confidence >= 0 && object.confidence <= 100 ? Math.round(object.confidence) : null;
    out.candidates.push({
      type,
      value,
      stix_id: str(object.id),
      name: str(object.name),
      confidence,
      tlp: markings.sort((a, b) => TLP_ORDER.indexOf(b) - TLP_ORDER.indexOf(a))[0] ?? null,
      labels: Array.isArray(object.labels) ? object.labels.filter((l): l is string => typeof l === 'string').slice(0, 50) : [],
      valid_until: isoOf(object.valid_until),
      modified: isoOf(object.modified),
      revoked: object.revoked === true,
    });
  }
  return out;
}

/** A user agent as an indicator: as written, trimmed, at most 1 KiB (as exposures keep it). */
export function userAgent(raw: string): { ok: true; value: string } | { ok: false; error: string } {
  const value = raw.trim();
  return value && value.length <= 1024 ? { ok: true, value } : { ok: false, error: 'must be 1 to 1024 characters' };
}

/** What a bare value is, by its shape: the type its normalisation is then held to. */
export function guessType(value: string): IocType {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^hxxps?:/i.test(value)) return 'url';
  const bare = value.replace(/\[\.\]/g, '.');
  if (bare.includes('/') && ipaddr.isValid(bare.split('/')[0]!)) return 'cidr';
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return 'ipv4';
  if (ipaddr.IPv6.isValid(bare)) return 'ipv6';
  if (bare.includes('@')) return 'email';
  if (/^[0-9a-f]{32}$/i.test(bare)) return 'md5';
  if (/^[0-9a-f]{40}$/i.test(bare)) return 'sha1';
  if (/^[0-9a-f]{64}$/i.test(bare)) return 'sha256';
  return 'domain';
}

/**
 * An indicator list, as abuse.ch publishes them: one value per line (`#` lines are comments), or
 * CSV whose `column` (a header name, or a number from 1) holds the value. Each value's type is
 * `type`, or told from its shape.
 */
export function readList(body: Buffer, options: { column?: string | number; type?: IocType }, maxObjects: number): Read {
  const out = new Reading();
  const lines = body
    .toString('utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  let values: string[];
  if (options.column === undefined) values = lines.map((l) => l.trim());
  else {
    let rows: string[][];
    try {
      rows = parse(lines.join('\n'), { relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }) as string[][];
    } catch (err) {
      throw new FeedProblem(`the list is not CSV: ${(err as Error).message.slice(0, 200)}`);
    }
    let at = typeof options.column === 'number' ? options.column - 1 : -1;
    if (typeof options.column === 'string') {
      at = rows[0]?.findIndex((h) => h.toLowerCase() === String(options.column).toLowerCase()) ?? -1;
      if (at < 0) throw new FeedProblem(`the list has no column "${options.column}" in its header row`);
      rows = rows.slice(1);
    }
    values = rows.map((r) => r[at] ?? '');
  }
  if (values.length > maxObjects) throw new FeedProblem(`the list holds ${values.length} entries, more than the ${maxObjects} a pull reads`);
  out.objects = values.length;
  for (const [index, raw] of values.entries()) {
    const type = options.type ?? guessType(raw);
    const normalised = normaliseIoc(type, raw);
    if (!normalised.ok) {
      out.reject(`entry ${index + 1}: ${type} ${normalised.error}`);
      continue;
    }
    out.candidates.push({ type, value: normalised.value, stix_id: null, name: null, confidence: null, tlp: null, labels: [], valid_until: null, modified: null, revoked: false });
  }
  return out;
}
