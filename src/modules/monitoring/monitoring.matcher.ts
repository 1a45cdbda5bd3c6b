import ipaddr from 'ipaddr.js';
import AhoCorasick from 'modern-ahocorasick';
import { pushTo } from '../../domain/collections.js';
import type { InsertedRecord } from '../hooks.js';

/** What the matcher reads of a record: a stored one, or a scan's candidate row. */
export type MatchedRecord = Pick<InsertedRecord, 'id' | 'email' | 'username' | 'username_lower' | 'domain' | 'ip' | 'phone' | 'full_name' | 'extra' | 'severity'>;

/** An active monitor as the matcher needs it. */
export interface ActiveMonitor {
  id: string;
  organization_id: string;
  type: string;
  /** Normalised terms (see domain/monitor-terms.ts). */
  terms: string[];
  /** The severity of its alerts; null: derived from each match (alertSeverity). */
  severity: string | null;
}

/** One term of one monitor found in one record. */
export interface Match {
  monitor: ActiveMonitor;
  record: MatchedRecord;
  term: string;
  /** email, username, domain, ip, phone, full_name or extra.<key>. */
  field: string;
}

/**
 * The severity of a match's alert: its monitor's, or when that is null, its record's, except that a
 * stealer-log credential is critical only when its URL is of the organization's own domain (one of
 * the monitor's domains, or one of its e-mails' domains) and high otherwise.
 */
export function alertSeverity(m: Match): string {
  if (m.monitor.severity !== null) return m.monitor.severity;
  if (m.record.severity !== 'critical') return m.record.severity;
  const host = urlHost(m.record.extra.url);
  const own = m.monitor.type === 'domain' ? m.monitor.terms : m.monitor.type === 'email' ? m.monitor.terms.map((t) => t.slice(t.lastIndexOf('@') + 1)) : [];
  return host !== null && own.some((d) => host === d || host.endsWith(`.${d}`)) ? 'critical' : 'high';
}

function urlHost(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}

interface Entry {
  monitor: ActiveMonitor;
  term: string;
}

/** The text fields a keyword is looked for in, with their names. */
function textFields(r: MatchedRecord): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  for (const f of ['email', 'username', 'domain', 'ip', 'phone', 'full_name'] as const) {
    const v = r[f];
    if (v) fields.push([f, v.toLowerCase()]);
  }
  for (const [k, v] of Object.entries(r.extra)) if (v) fields.push([`extra.${k}`, v.toLowerCase()]);
  return fields;
}

/**
 * Every active monitor of every organization as an index, not a list to loop over: exact terms
 * (e-mails, usernames) in hash maps, domains by the record's domain and each of its parents (its
 * labels from the right), IP ranges by prefix length then network address, keywords in one
 * Aho-Corasick automaton.
 */
export class MonitorIndex {
  private readonly emails = new Map<string, Entry[]>();
  private readonly usernames = new Map<string, Entry[]>();
  private readonly domains = new Map<string, Entry[]>();
  /** IPv4 ranges: prefix length -> network address (as an integer) -> entries. */
  private readonly v4 = new Map<number, Map<number, Entry[]>>();
  /** IPv6 ranges: prefix length -> network address (canonical text) -> entries. */
  private readonly v6 = new Map<number, Map<string, Entry[]>>();
  private readonly keywordEntries: Entry[][] = [];
  private readonly keywords: AhoCorasick | null;
  readonly size: number;

  constructor(monitors: readonly ActiveMonitor[]) {
    const keywordIndex = new Map<string, number>();
    const patterns: string[] = [];
    let size = 0;
    for (const monitor of monitors) {
      for (const term of monitor.terms) {
        size++;
        const entry = { monitor, term };
        switch (monitor.type) {
          case 'email':
            pushTo(this.emails, term, entry);
            break;
          case 'username':
            pushTo(this.usernames, term, entry);
            break;
          case 'domain':
            pushTo(this.domains, term, entry);
            break;
          case 'ip':
            this.addRange(term, entry);
            break;
          case 'keyword': {
            let i = keywordIndex.get(term);
            if (i === undefined) {
              i = patterns.push(term) - 1;
              keywordIndex.set(term, i);
              this.keywordEntries.push([]);
            }
            this.keywordEntries[i]?.push(entry);
            break;
          }
        }
      }
    }
    this.keywords = patterns.length ? new AhoCorasick(patterns) : null;
    this.size = size;
  }

  private addRange(term: string, entry: Entry) {
    const [address, bitsText] = term.includes('/') ? (term.split('/') as [string, string]) : [term, undefined];
    const parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv4') {
      const bits = bitsText === undefined ? 32 : Number(bitsText);
      const byNetwork = this.v4.get(bits) ?? new Map<number, Entry[]>();
      this.v4.set(bits, byNetwork);
      pushTo(byNetwork, v4Network(v4Number(parsed as ipaddr.IPv4), bits), entry);
    } else {
      const bits = bitsText === undefined ? 128 : Number(bitsText);
      const byNetwork = this.v6.get(bits) ?? new Map<string, Entry[]>();
      this.v6.set(bits, byNetwork);
      pushTo(byNetwork, ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`).toNormalizedString(), entry);
    }
  }

  /** Every (monitor, term) that `records` match, once each per record, with the field it was found in. */
  match(records: readonly MatchedRecord[]): Match[] {
    const out: Match[] = [];
    for (const record of records) {
      const seen = new Set<Entry>();
      const found = (entries: Entry[] | undefined, field: string) => {
        for (const e of entries ?? []) {
          if (seen.has(e)) continue;
          seen.add(e);
          out.push({ monitor: e.monitor, record, term: e.term, field });
        }
      };
      if (record.email) found(this.emails.get(record.email), 'email');
      if (record.username_lower) found(this.usernames.get(record.username_lower), 'username');
      if (this.domains.size) {
        if (record.domain) for (const d of selfAndParents(record.domain)) found(this.domains.get(d), 'domain');
        const emailDomain = record.email?.slice(record.email.lastIndexOf('@') + 1);
        if (emailDomain && emailDomain !== record.domain) for (const d of selfAndParents(emailDomain)) found(this.domains.get(d), 'email');
      }
      if (record.ip && (this.v4.size || this.v6.size)) this.matchIp(record.ip, found);
      if (this.keywords) {
        for (const [field, text] of textFields(record)) {
          for (const m of this.keywords.search(text)) found(this.keywordEntries[m.patternIndex], field);
        }
      }
    }
    return out;
  }

  private matchIp(ip: string, found: (entries: Entry[] | undefined, field: string) => void) {
    if (!ipaddr.isValid(ip)) return;
    const parsed = ipaddr.parse(ip);
    if (parsed.kind() === 'ipv4') {
      const n = v4Number(parsed as ipaddr.IPv4);
      for (const [bits, byNetwork] of this.v4) found(byNetwork.get(v4Network(n, bits)), 'ip');
    } else {
      for (const [bits, byNetwork] of this.v6) found(byNetwork.get(ipaddr.IPv6.networkAddressFromCIDR(`${ip}/${bits}`).toNormalizedString()), 'ip');
    }
  }
}

const v4Number = (a: ipaddr.IPv4) => a.octets.reduce((n, o) => n * 256 + o, 0);
const v4Network = (n: number, bits: number) => (bits === 0 ? 0 : n - (n % 2 ** (32 - bits)));

/** A domain and each of its parents: a.b.example.com, b.example.com, example.com, com. */
function* selfAndParents(domain: string): Generator<string> {
  let d = domain;
  for (;;) {
    yield d;
    const dot = d.indexOf('.');
    if (dot < 0) return;
    d = d.slice(dot + 1);
  }
}
