import type { FeedCorpus, UpstreamBreach } from './feeds/index.js';
import type { LeaksService } from './leaks/index.js';
import type { MonitoringService } from './monitoring/index.js';

/**
 * The leak corpus as hibp feeds write to it: the organization's watched domains, a source per
 * upstream breach ("<title> (Have I Been Pwned)", made once), its accounts through the ingest every
 * record takes (so monitors fire, and a repeat is a duplicate).
 */
export function leakCorpus(leaks: Pick<LeaksService, 'accounts' | 'createSource' | 'ingest'>, monitoring: Pick<MonitoringService, 'watchedDomains'>): FeedCorpus {
  const system = { p: null, ip: null };
  const nameOf = (b: UpstreamBreach) => `${b.title} (Have I Been Pwned)`.slice(0, 200);
  return {
    domains: (orgId) => monitoring.watchedDomains(orgId),
    async source(b) {
      const known = await leaks.accounts.sourceNamed(nameOf(b));
      if (known) return known.id;
      const body = { name: nameOf(b), description: b.description, domain: b.domain, breach_date: b.breach_date, data_classes: b.data_classes, kind: 'breach' as const, is_verified: b.is_verified, is_fabricated: b.is_fabricated, is_sensitive: b.is_sensitive, is_spam_list: b.is_spam_list };
      try {
        return (await leaks.createSource(system, body)).id;
      } catch (err) {
        // Made meanwhile by another feed's pull: that one.
        const made = await leaks.accounts.sourceNamed(nameOf(b));
        if (made) return made.id;
        throw err;
      }
    },
    async add(sourceId, emails) {
      return (await leaks.ingest(sourceId, emails.map((email, index) => ({ index, value: { email } })), system)).accepted;
    },
  };
}
