import ipaddr from 'ipaddr.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { normaliseIp, normaliseUrl } from '../../domain/ioc.js';
import type { IndicatorMatch, Observed } from '../hooks.js';
import type { FeedsRepository } from './feeds.repository.js';

/** A match and the organization whose indicator it is. */
export type OrgMatch = IndicatorMatch & { organization_id: string };

/** The longest user agent compared (as exposures keep it). */
const UA_MAX = 1024;
/** More candidate values than this in one statement are asked in turns. */
const CHUNK = 500;

type CidrRow = Awaited<ReturnType<FeedsRepository['cidrIndicators']>>[number];

/**
 * Each organization's CIDR indicators, parsed, kept while their count and latest change stay the
 * same: every address seen is tested against them all, and reading and parsing them for each hit
 * cost more than the rest of a match.
 */
export class CidrRanges {
  private readonly kept = new Map<string, { stamp: string; ranges: Array<{ row: CidrRow; range: [ipaddr.IPv4 | ipaddr.IPv6, number] }> }>();

  async of(db: Kysely<DB>, repo: FeedsRepository, orgId: string | null) {
    const key = orgId ?? '*';
    const stamp = await repo.cidrStamp(db, orgId);
    const kept = this.kept.get(key);
    if (kept?.stamp === stamp) return kept.ranges;
    const ranges: Array<{ row: CidrRow; range: [ipaddr.IPv4 | ipaddr.IPv6, number] }> = [];
    for (const row of await repo.cidrIndicators(db, orgId)) {
      try {
        ranges.push({ row, range: ipaddr.parseCIDR(row.value) });
      } catch {
        // Stored normalised: never here.
      }
    }
    if (this.kept.size >= 1000) this.kept.clear();
    this.kept.set(key, { stamp, ranges });
    return ranges;
  }
}

interface Wanted {
  /** `type \u0000 value` -> the observations (index, field) that would be named by it. */
  exact: Map<string, Array<{ at: number; field: IndicatorMatch['field'] }>>;
  /** Addresses seen, for the CIDR indicators. */
  ips: Array<{ at: number; addr: ipaddr.IPv4 | ipaddr.IPv6 }>;
}

/** Every value an indicator could name an observation by: its address, its URL, its URL's host and parent domains, its user agent. */
function wantedOf(observed: readonly Observed[]): Wanted {
  const exact: Wanted['exact'] = new Map();
  const ips: Wanted['ips'] = [];
  const want = (type: string, value: string, at: number, field: IndicatorMatch['field']) => {
    const key = `${type}\u0000${value}`;
    const list = exact.get(key);
    if (list) {
      if (!list.some((w) => w.at === at)) list.push({ at, field });
    } else exact.set(key, [{ at, field }]);
  };
  const address = (raw: string, at: number, field: IndicatorMatch['field']) => {
    const ip = normaliseIp(raw.replace(/^\[|\]$/g, ''));
    if (!ip.ok) return false;
    want(ip.value.includes(':') ? 'ipv6' : 'ipv4', ip.value, at, field);
    ips.push({ at, addr: ipaddr.parse(ip.value) });
    return true;
  };
  observed.forEach((o, at) => {
    if (o.ip) address(o.ip, at, 'ip');
    if (o.url) {
      const url = normaliseUrl(o.url);
      if (url.ok) {
        want('url', url.value, at, 'url');
        const host = new URL(url.value).hostname;
        if (!address(host, at, 'host')) {
          // evil.example names www.evil.example too.
          const labels = host.split('.');
          for (let i = 0; i <= labels.length - 2; i++) want('domain', labels.slice(i).join('.'), at, 'host');
        }
      }
    }
    const ua = o.user_agent?.trim();
    if (ua) want('user-agent', ua.slice(0, UA_MAX), at, 'user_agent');
  });
  return { exact, ips };
}

/**
 * Which live indicators (not revoked, not a false positive, `valid_until` not past) name what was
 * seen: an address (exactly, or within a CIDR indicator), a URL (exactly), its host (a domain
 * indicator of it or of a parent domain), a user agent (exactly). Of one organization, or of every
 * organization (`orgId` null: ingested leak records are everyone's).
 */
export async function matchIndicators(db: Kysely<DB>, repo: FeedsRepository, orgId: string | null, observed: readonly Observed[], now: string, cidrs: CidrRanges = new CidrRanges()): Promise<OrgMatch[][]> {
  const out: OrgMatch[][] = observed.map(() => []);
  // Asked first: with no indicator (most installations, most of the time), an ingest's records are not parsed for addresses.
  if (observed.length === 0 || !(await repo.anyIndicator(db, orgId))) return out;
  const { exact, ips } = wantedOf(observed);
  if (exact.size === 0) return out;
  const byType = new Map<string, string[]>();
  for (const key of exact.keys()) {
    const [type, value] = key.split('\u0000') as [string, string];
    const list = byType.get(type);
    if (list) list.push(value);
    else byType.set(type, [value]);
  }
  const found: Array<{ row: Omit<CidrRow, 'valid_until'>; at: number; field: IndicatorMatch['field'] }> = [];
  for (const [type, values] of byType) {
    for (let i = 0; i < values.length; i += CHUNK) {
      for (const row of await repo.liveIndicators(db, orgId, type, values.slice(i, i + CHUNK), now)) {
        for (const w of exact.get(`${type}\u0000${row.value}`) ?? []) found.push({ row, ...w });
      }
    }
  }
  if (ips.length) {
    for (const { row, range } of await cidrs.of(db, repo, orgId)) {
      if (row.valid_until !== null && row.valid_until <= now) continue;
      for (const { at, addr } of ips) if (addr.kind() === range[0].kind() && addr.match(range)) found.push({ row, at, field: 'ip' });
    }
  }
  if (!found.length) return out;
  const feeds = await repo.feedsOf(db, [...new Set(found.map((f) => f.row.id))]);
  for (const { row, at, field } of found) {
    out[at]!.push({
      organization_id: row.organization_id,
      indicator: row.id,
      type: row.type,
      value: row.value,
      field,
      feeds: feeds.get(row.id) ?? [],
      confidence: row.confidence === null ? null : Number(row.confidence),
      tlp: row.tlp,
    });
  }
  return out;
}
