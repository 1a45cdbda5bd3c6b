import type { Config } from '../../config.js';
import { normaliseDomain, normaliseEmail } from '../../domain/ioc.js';
import type { Principal } from '../identity/index.js';
import type { HashMode, LeaksService } from '../leaks/index.js';
import type { MonitoringService } from '../monitoring/index.js';
import { DATA_CLASS_NAMES, presentBreach } from './hibp.presenters.js';

/** An answer of Have I Been Pwned's shape: status, optional `{statusCode, message}` body, headers. */
export class HibpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** 400 and 404 answer with no body, as Have I Been Pwned's do. */
    readonly empty = false,
  ) {
    super(message);
  }
}

export const badRequest = () => new HibpError(400, 'Bad request — the account does not comply with an acceptable format.', {}, true);
const notWatched = (domain: string) =>
  new HibpError(403, `Your organization does not watch ${domain}: create an active domain monitor for it (or a parent domain) to search it.`);


/** A domain search answers with at most this many addresses (Have I Been Pwned's DomainSearchMaxBreachedAccounts). */
const DOMAIN_SEARCH_MAX = 100_000;
const MAX_WATCHED_DOMAINS = 10_000;
/** Plans here do not lapse or renew: Have I Been Pwned's dates for them say "far ahead". */
const FAR_AHEAD = '9999-12-31T00:00:00Z';


export type Breach = ReturnType<typeof presentBreach>;

/** A domain in a path, normalised, or 400. */
function domainParam(raw: string): string {
  const n = normaliseDomain(raw);
  if (!n.ok || !n.value.includes('.')) throw badRequest();
  return n.value;
}

function emailParam(raw: string): string {
  const n = normaliseEmail(raw);
  if (!n.ok) throw badRequest();
  return n.value;
}

/**
 * (address, value) pairs as Have I Been Pwned answers a domain: each alias (the part before @), in
 * order, with its values sorted and once each; at most `max` aliases; null when there are none.
 */
function byAlias(pairs: ReadonlyArray<readonly [string, string]>, max = Infinity): Record<string, string[]> | null {
  const grouped = new Map<string, Set<string>>();
  for (const [email, value] of pairs) {
    const alias = email.slice(0, email.lastIndexOf('@'));
    if (!grouped.has(alias) && grouped.size >= max) continue;
    grouped.set(alias, (grouped.get(alias) ?? new Set<string>()).add(value));
  }
  if (grouped.size === 0) return null;
  return Object.fromEntries([...grouped].sort(([a], [b]) => (a < b ? -1 : 1)).map(([alias, values]) => [alias, [...values].sort()]));
}

/**
 * The Have I Been Pwned v3 API over threatmon's corpus: a leak source is a breach, a record's e-mail
 * or username an account, a domain an organization watches with an active domain monitor a
 * verified domain.
 */
export class HibpService {
  constructor(
    private readonly leaks: LeaksService,
    private readonly monitoring: MonitoringService,
    private readonly config: Pick<Config, 'planLimits'>,
  ) {}

  async breachedAccount(account: string, options: { truncate: boolean; domain?: string; includeUnverified: boolean }): Promise<Breach[] | Array<{ Name: string }> | null> {
    const trimmed = account.trim();
    // PostgreSQL refuses NUL in text: such an account is no account.
    if (trimmed === '' || trimmed.length > 320 || trimmed.includes('\u0000')) throw badRequest();
    const domain = options.domain?.trim().toLowerCase();
    // Sensitive breaches are never answered by account, as on Have I Been Pwned.
    const sources = (await this.leaks.accounts.sourcesOf(trimmed)).filter(
      (s) => !s.is_sensitive && (options.includeUnverified || s.is_verified) && (!domain || s.domain === domain),
    );
    if (sources.length === 0) return null;
    return options.truncate ? sources.map((s) => ({ Name: s.name })) : sources.map(presentBreach);
  }

  async breaches(options: { domain?: string; isSpamList?: boolean }): Promise<Breach[]> {
    const domain = options.domain?.trim().toLowerCase();
    return (await this.leaks.accounts.allSources())
      .filter((s) => (!domain || s.domain === domain) && (options.isSpamList === undefined || Boolean(s.is_spam_list) === options.isSpamList))
      .map(presentBreach);
  }

  async breach(name: string): Promise<Breach | null> {
    if (name.includes('\u0000') || name.length > 200) return null;
    const s = await this.leaks.accounts.sourceNamed(name);
    return s ? presentBreach(s) : null;
  }

  async latestBreach(): Promise<Breach | null> {
    const s = await this.leaks.accounts.latestSource();
    return s ? presentBreach(s) : null;
  }

  dataClasses(): string[] {
    return Object.values(DATA_CLASS_NAMES).sort();
  }

  /** 403 unless the organization watches `domain` (or a parent of it) with an active domain monitor. */
  private async assertWatched(p: Principal, domain: string): Promise<void> {
    const watched = await this.monitoring.watchedDomains(p.organization.id);
    if (!watched.some((d) => domain === d || domain.endsWith(`.${d}`))) throw notWatched(domain);
  }

  async breachedDomain(p: Principal, rawDomain: string): Promise<Record<string, string[]> | null> {
    const domain = domainParam(rawDomain);
    await this.assertWatched(p, domain);
    return byAlias((await this.leaks.accounts.addressesAt(domain)).map((a) => [a.email, a.source.name]), DOMAIN_SEARCH_MAX);
  }

  async subscribedDomains(p: Principal) {
    const out = [];
    for (const domain of await this.monitoring.watchedDomains(p.organization.id)) {
      const all = new Set<string>();
      const notSpam = new Set<string>();
      for (const a of await this.leaks.accounts.addressesAt(domain)) {
        all.add(a.email);
        if (!a.source.is_spam_list) notSpam.add(a.email);
      }
      out.push({
        DomainName: domain,
        PwnCount: all.size,
        PwnCountExcludingSpamLists: notSpam.size,
        PwnCountExcludingSpamListsAtLastSubscriptionRenewal: notSpam.size,
        NextSubscriptionRenewal: FAR_AHEAD,
      });
    }
    return out;
  }

  subscriptionStatus(p: Principal) {
    const plan = p.organization.plan;
    return {
      SubscriptionName: plan.charAt(0).toUpperCase() + plan.slice(1),
      Description: `The threatmon ${plan} plan of ${p.organization.name}.`,
      SubscribedUntil: FAR_AHEAD,
      Rpm: this.config.planLimits[plan],
      DomainSearchMaxBreachedAccounts: DOMAIN_SEARCH_MAX,
      MaxBreachedDomains: MAX_WATCHED_DOMAINS,
      IncludesStealerLogs: true,
      IncludesBulkDomainAdd: false,
      IncludesAutoSubdomainVerification: true,
      IncludesCustomerDomains: false,
      IncludesKAnon: true,
    };
  }

  /** The sites a stealer log holds the address's credentials for; the address's domain must be watched. */
  async stealerLogsByEmail(p: Principal, rawEmail: string): Promise<string[] | null> {
    const email = emailParam(rawEmail);
    await this.assertWatched(p, email.slice(email.lastIndexOf('@') + 1));
    const sites = await this.leaks.accounts.stealerSitesOf(email);
    return sites.length ? sites : null;
  }

  /** The addresses a stealer log holds credentials of for a watched site. */
  async stealerLogsByWebsiteDomain(p: Principal, rawDomain: string): Promise<string[] | null> {
    const domain = domainParam(rawDomain);
    await this.assertWatched(p, domain);
    const emails = await this.leaks.accounts.stealerAddressesFor(domain);
    return emails.length ? emails : null;
  }

  /** Each alias at a watched e-mail domain, with the sites a stealer log holds its credentials for. */
  async stealerLogsByEmailDomain(p: Principal, rawDomain: string): Promise<Record<string, string[]> | null> {
    const domain = domainParam(rawDomain);
    await this.assertWatched(p, domain);
    const stolen = await this.leaks.accounts.addressesAt(domain, { stealerLogsOnly: true });
    return byAlias(stolen.flatMap((a) => (a.site ? [[a.email, a.site] as [string, string]] : [])));
  }

  range(prefix: string, pad: boolean, mode: HashMode): Promise<string> {
    return this.leaks.passwordRange(prefix, pad, mode);
  }
}
