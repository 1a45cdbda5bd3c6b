import { parse as parseDomain } from 'tldts';
import { type IocType, normaliseIoc, refang } from '../../domain/ioc.js';
import { FeedProblem, guessType, type Read, Reading, TLP_ORDER, userAgent } from './feeds.read.js';
import type { Get } from './feeds.taxii.js';

/** What a MISP feed pull read: the changed events' indicators up to the last good event, and each event's timestamp taken. */
export interface MispRead extends Read {
  cursor: Record<string, string>;
  /** Why it stopped before the end (an event that failed, the object limit): what came before is applied. */
  stopped: string | null;
}

/** MISP attribute types and the indicator type of their value (or of each part of a `a|b` pair). */
const TYPES: Record<string, Array<IocType | 'user-agent' | null>> = {
  'ip-src': ['ipv4'],
  'ip-dst': ['ipv4'],
  'ip-src|port': ['ipv4', null],
  'ip-dst|port': ['ipv4', null],
  domain: ['domain'],
  hostname: ['domain'],
  'domain|ip': ['domain', 'ipv4'],
  'hostname|port': ['domain', null],
  url: ['url'],
  uri: ['url'],
  'email-src': ['email'],
  'email-dst': ['email'],
  email: ['email'],
  md5: ['md5'],
  sha1: ['sha1'],
  sha256: ['sha256'],
  sha512: ['sha512'],
  'filename|md5': [null, 'md5'],
  'filename|sha1': [null, 'sha1'],
  'filename|sha256': [null, 'sha256'],
  'filename|sha512': [null, 'sha512'],
  'user-agent': ['user-agent'],
};

type Tag = { name?: unknown };
const tagNames = (tags: unknown): string[] => (Array.isArray(tags) ? tags.map((t: Tag) => (typeof t?.name === 'string' ? t.name : '')).filter(Boolean) : []);
/** The strictest `tlp:` tag (MISP's taxonomy; `white` is TLP 2.0's `clear`). */
const tlpOf = (names: string[]) =>
  names
    .map((n) => n.toLowerCase().match(/^tlp:\s*(.+)$/)?.[1]?.replace('white', 'clear'))
    .filter((t): t is string => t !== undefined && TLP_ORDER.includes(t))
    .sort((a, b) => TLP_ORDER.indexOf(b) - TLP_ORDER.indexOf(a))[0] ?? null;
const secondsIso = (v: unknown) => {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000).toISOString() : null;
};

/** A value as an indicator of `type` (an address's family told from its shape), or why not. */
function normalised(type: IocType | 'user-agent', raw: string): { ok: true; type: string; value: string } | { ok: false; error: string } {
  if (type === 'user-agent') {
    const ua = userAgent(raw);
    return ua.ok ? { ok: true, type, value: ua.value } : ua;
  }
  const actual = type === 'ipv4' ? guessType(raw) : type;
  const n = normaliseIoc(actual === 'ipv6' || actual === 'cidr' ? actual : type, raw);
  return n.ok ? { ok: true, type: actual === 'ipv6' || actual === 'cidr' ? actual : type, value: n.value } : n;
}

class MispReading extends Reading implements MispRead {
  stopped: string | null = null;
  constructor(public cursor: Record<string, string>) {
    super();
  }

  /** A MISP event's attributes (its own and its objects'), each with to_ids an indicator; a deleted one revoked. */
  event(doc: unknown, uuid: string) {
    const event = (doc as { Event?: Record<string, unknown> } | null)?.Event;
    if (!event || typeof event !== 'object') throw new FeedProblem(`event ${uuid} is not a MISP event ({"Event": {...}})`);
    const eventTags = tagNames(event.Tag);
    const objects = Array.isArray(event.Object) ? (event.Object as Array<{ Attribute?: unknown }>) : [];
    const attributes = [...(Array.isArray(event.Attribute) ? event.Attribute : []), ...objects.flatMap((o) => (Array.isArray(o?.Attribute) ? o.Attribute : []))] as Array<Record<string, unknown>>;
    for (const a of attributes) {
      this.objects++;
      if (!a || typeof a !== 'object' || typeof a.type !== 'string' || typeof a.value !== 'string') {
        this.reject(`event ${uuid}: an attribute without type and value`);
        continue;
      }
      const types = TYPES[a.type];
      // Attributes not meant for detection (to_ids false), and types that name no indicator (text, comment...), are context.
      if (!types || a.to_ids === false || a.to_ids === '0') continue;
      const parts = types.length > 1 ? a.value.split('|') : [a.value];
      const tags = [...eventTags, ...tagNames(a.Tag)];
      types.forEach((type, i) => {
        if (type === null) return;
        const n = normalised(type, parts[i] ?? '');
        if (!n.ok) return this.reject(`event ${uuid}: ${a.type} ${String(parts[i] ?? '').slice(0, 100)} ${n.error}`);
        this.candidates.push({
          type: n.type,
          value: n.value,
          stix_id: null,
          name: typeof event.info === 'string' ? event.info.slice(0, 200) : null,
          confidence: null,
          tlp: tlpOf(tags),
          labels: tags.filter((t) => !t.toLowerCase().startsWith('tlp:')).slice(0, 50),
          valid_until: null,
          modified: secondsIso(a.timestamp) ?? secondsIso(event.timestamp),
          revoked: a.deleted === true,
        });
      });
    }
  }
}

/**
 * A MISP feed directory: `manifest.json` names each event with its timestamp; each event whose
 * timestamp is later than the one taken before (the cursor) is read from `<uuid>.json`, oldest
 * first. An event that fails ends the pull there: the events before it, and their timestamps, are
 * what it applies. (`hashes.csv`, for MISP's own correlation, is not needed to pull.)
 */
export async function readMisp(get: Get, url: string, cursor: Record<string, string>, maxObjects: number): Promise<MispRead> {
  const base = url.endsWith('manifest.json') ? url.slice(0, -'manifest.json'.length) : url.endsWith('/') ? url : `${url}/`;
  const answer = await get(`${base}manifest.json`, 'application/json');
  if (answer.status !== 200) throw new FeedProblem(`manifest.json answered HTTP ${answer.status}`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new FeedProblem('manifest.json is not JSON');
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) throw new FeedProblem('manifest.json is not a MISP feed manifest (an object of events by uuid)');
  const changed = Object.entries(manifest as Record<string, { timestamp?: unknown }>)
    .filter(([uuid, e]) => /^[0-9a-f-]{36}$/i.test(uuid) && Number(e?.timestamp) > Number(cursor[uuid] ?? 0))
    .sort((a, b) => Number(a[1].timestamp) - Number(b[1].timestamp));
  const out = new MispReading({ ...cursor });
  for (const [uuid, entry] of changed) {
    if (out.objects >= maxObjects) {
      out.stopped = `stopped after ${maxObjects} attributes (the limit of a pull): the rest comes in the next pull`;
      break;
    }
    try {
      const event = await get(`${base}${uuid}.json`, 'application/json');
      if (event.status !== 200) throw new FeedProblem(`${uuid}.json answered HTTP ${event.status}`);
      let doc: unknown;
      try {
        doc = JSON.parse(event.body.toString('utf8'));
      } catch {
        throw new FeedProblem(`${uuid}.json is not JSON`);
      }
      out.event(doc, uuid);
    } catch (err) {
      out.stopped = err instanceof FeedProblem ? err.message : `${uuid}.json: ${(err as Error).message}`;
      break;
    }
    out.cursor[uuid] = String(entry.timestamp);
  }
  return out;
}

/** Where freetext splits: white space and the punctuation around values in prose. */
const SEPARATORS = /[\s,;"'<>()[\]{}|]+/;

/**
 * MISP's freetext feed format: indicators found in any text, as its freetext import finds them:
 * each word, refanged, that is a URL, an address or CIDR, an e-mail, a hash, or a domain under a
 * known public suffix. Other words are prose, neither indicators nor rejects.
 */
export function readFreetext(body: Buffer, maxObjects: number): Read {
  const out = new Reading();
  const seen = new Set<string>();
  for (const word of body.toString('utf8').replace(/\[\.\]/g, '.').replace(/hxxp/gi, 'http').split(SEPARATORS)) {
    const token = refang(word.replace(/^[.:]+|[.:]+$/g, ''));
    if (token.length < 4 || seen.has(token)) continue;
    seen.add(token);
    const type = guessType(token);
    if (type === 'domain' && !parseDomain(token).isIcann) continue;
    const n = normaliseIoc(type, token);
    if (!n.ok) continue;
    if (++out.objects > maxObjects) throw new FeedProblem(`the text holds more than the ${maxObjects} indicators a pull reads`);
    out.candidates.push({ type, value: n.value, stix_id: null, name: null, confidence: null, tlp: null, labels: [], valid_until: null, modified: null, revoked: false });
  }
  return out;
}
