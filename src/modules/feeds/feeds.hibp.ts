import { DATA_CLASS_OF } from '../../domain/hibp-data-classes.js';
import { normaliseEmail } from '../../domain/ioc.js';
import { FeedProblem, Reading } from './feeds.read.js';
import type { Get } from './feeds.taxii.js';

/** A breach as an upstream Have I Been Pwned describes it (GET /breaches), what threatmon keeps of it. */
export interface UpstreamBreach {
  name: string;
  title: string;
  domain: string | null;
  breach_date: string | null;
  data_classes: string[];
  description: string;
  is_verified: boolean;
  is_fabricated: boolean;
  is_sensitive: boolean;
  is_spam_list: boolean;
}

/** Where an hibp feed puts what it reads: the leak corpus, for the organization's own domains. */
export interface FeedCorpus {
  /** The organization's own domains: those its active domain monitors watch (as threatmon's own /hibp takes them). */
  domains(orgId: string): Promise<string[]>;
  /** The leak source of an upstream breach (made the first time), by name. */
  source(breach: UpstreamBreach): Promise<string>;
  /** These e-mail addresses into that source (a repeat is a duplicate, never a second record): how many were new. */
  add(sourceId: string, emails: string[]): Promise<number>;
}

export interface HibpRead extends Reading {
  /** Per breach, the organization's addresses in it. */
  accounts: Map<string, string[]>;
  breaches: Map<string, UpstreamBreach>;
}

const HIBP_JSON = 'application/json';
const dateOf = (v: unknown) => (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : null);

async function json(get: Get, url: string, what: string): Promise<{ status: number; body: unknown }> {
  const answer = await get(url, HIBP_JSON);
  if (answer.status === 404) return { status: 404, body: null };
  if (answer.status === 401 || answer.status === 403) throw new FeedProblem(`${what} answered HTTP ${answer.status}: the hibp-api-key is refused, or the domain is not verified for it`);
  if (answer.status !== 200) throw new FeedProblem(`${what} answered HTTP ${answer.status}`);
  try {
    return { status: 200, body: JSON.parse(answer.body.toString('utf8')) };
  } catch {
    throw new FeedProblem(`${what} did not answer JSON`);
  }
}

/**
 * An upstream Have I Been Pwned v3 API, for the organization's own domains: `breacheddomain/<d>`
 * (each alias and the breaches it is in) for each, and `breaches` for what those breaches are.
 * A domain the upstream knows nothing of (404) has none; a refused key (401, 403) fails the pull.
 */
export async function readHibp(get: Get, url: string, domains: string[], maxObjects: number): Promise<HibpRead> {
  const base = url.replace(/\/+$/, '');
  const out = Object.assign(new Reading(), { accounts: new Map<string, string[]>(), breaches: new Map<string, UpstreamBreach>() });
  for (const domain of domains) {
    const { body } = await json(get, `${base}/breacheddomain/${encodeURIComponent(domain)}`, `breacheddomain/${domain}`);
    if (body === null) continue;
    if (typeof body !== 'object' || Array.isArray(body)) throw new FeedProblem(`breacheddomain/${domain} is not an object of aliases`);
    for (const [alias, names] of Object.entries(body as Record<string, unknown>)) {
      if (++out.objects > maxObjects) throw new FeedProblem(`the upstream names more than the ${maxObjects} accounts a pull reads`);
      const email = normaliseEmail(`${alias}@${domain}`);
      if (!email.ok || !Array.isArray(names)) {
        out.reject(`${alias}@${domain}: ${email.ok ? 'its breaches are not a list' : email.error}`);
        continue;
      }
      for (const name of names) {
        if (typeof name !== 'string' || !name) continue;
        const list = out.accounts.get(name);
        if (list) list.push(email.value);
        else out.accounts.set(name, [email.value]);
      }
    }
  }
  if (out.accounts.size === 0) return out;
  const { body } = await json(get, `${base}/breaches`, 'breaches');
  const known = new Map((Array.isArray(body) ? (body as Array<Record<string, unknown>>) : []).filter((b) => b && typeof b.Name === 'string').map((b) => [b.Name as string, b]));
  for (const name of out.accounts.keys()) {
    const b = known.get(name) ?? {};
    out.breaches.set(name, {
      name,
      title: typeof b.Title === 'string' && b.Title ? b.Title : name,
      domain: typeof b.Domain === 'string' && b.Domain ? b.Domain : null,
      breach_date: dateOf(b.BreachDate),
      data_classes: [...new Set((Array.isArray(b.DataClasses) ? b.DataClasses : []).map((c) => DATA_CLASS_OF[String(c)]).filter((c): c is string => Boolean(c)).concat('email'))],
      description: typeof b.Description === 'string' ? b.Description.slice(0, 5000) : '',
      is_verified: b.IsVerified === true,
      is_fabricated: b.IsFabricated === true,
      is_sensitive: b.IsSensitive === true,
      is_spam_list: b.IsSpamList === true,
    });
  }
  return out;
}
