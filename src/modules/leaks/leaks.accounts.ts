import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { normaliseEmail } from '../../domain/ioc.js';
import { reverseDomain } from '../../domain/leak-record.js';
import type { SourceRow } from './leaks.repository.js';

/**
 * The corpus as accounts (a record's e-mail or username) and the sources they are in: what Have I
 * Been Pwned's API answers. Every query reads an index: email, username_lower, domain_rev,
 * email_domain_rev.
 */
export class LeakAccounts {
  constructor(private readonly db: () => Kysely<DB>) {}

  /** The sources holding `account` as an e-mail address (normalised) or a username (case aside). */
  sourcesOf(account: string): Promise<SourceRow[]> {
    return this.sourcesQuery(account).execute();
  }

  /** The query of sourcesOf (the bench's floor server runs it bare). */
  sourcesQuery(account: string) {
    const email = normaliseEmail(account);
    const db = this.db();
    const ids = db
      .selectFrom('leak_records')
      .select('source_id')
      .where('username_lower', '=', account.toLowerCase())
      .union(db.selectFrom('leak_records').select('source_id').where('email', '=', email.ok ? email.value : account.toLowerCase()));
    return db.selectFrom('leak_sources').selectAll().where('id', 'in', ids).orderBy('name');
  }

  allSources(): Promise<SourceRow[]> {
    return this.db().selectFrom('leak_sources').selectAll().orderBy('name').execute();
  }

  sourceNamed(name: string): Promise<SourceRow | undefined> {
    return this.db().selectFrom('leak_sources').selectAll().where(sql`lower(name)`, '=', name.toLowerCase()).executeTakeFirst();
  }

  latestSource(): Promise<SourceRow | undefined> {
    return this.db().selectFrom('leak_sources').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /**
   * The e-mail addresses at exactly `domain` (not its subdomains), each with the sources it is in
   * and whether it is in a stealer log, the site (record domain) it was stolen for.
   */
  async addressesAt(domain: string, options: { stealerLogsOnly?: boolean } = {}): Promise<Array<{ email: string; source: Pick<SourceRow, 'name' | 'is_spam_list'>; site: string | null }>> {
    const rev = reverseDomain(domain);
    const db = this.db();
    const suffix = `@${domain}`;
    const byColumn = (column: 'domain_rev' | 'email_domain_rev') => {
      let q = db
        .selectFrom('leak_records')
        .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
        .select(['leak_records.email', 'leak_records.domain', 'leak_sources.name', 'leak_sources.is_spam_list'])
        .where(`leak_records.${column}`, '=', rev)
        .where('leak_records.email', 'is not', null);
      if (options.stealerLogsOnly) q = q.where('leak_sources.kind', '=', 'stealer_log');
      return q;
    };
    // The source's name and flag come with each row: no second read of the sources.
    const rows = await byColumn('domain_rev').union(byColumn('email_domain_rev')).execute();
    return rows.flatMap((r) => (r.email?.endsWith(suffix) ? [{ email: r.email, source: { name: r.name, is_spam_list: r.is_spam_list }, site: r.domain }] : []));
  }

  /** The sites (record domains) a stealer log holds credentials of `email` for. */
  async stealerSitesOf(email: string): Promise<string[]> {
    const rows = await this.db()
      .selectFrom('leak_records')
      .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
      .select('leak_records.domain')
      .distinct()
      .where('leak_records.email', '=', email)
      .where('leak_sources.kind', '=', 'stealer_log')
      .where('leak_records.domain', 'is not', null)
      .execute();
    return rows.map((r) => r.domain as string).sort();
  }

  /** The e-mail addresses a stealer log holds credentials of for the site `domain` (exactly). */
  async stealerAddressesFor(domain: string): Promise<string[]> {
    const rows = await this.db()
      .selectFrom('leak_records')
      .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
      .select('leak_records.email')
      .distinct()
      .where('leak_records.domain_rev', '=', reverseDomain(domain))
      .where('leak_sources.kind', '=', 'stealer_log')
      .where('leak_records.email', 'is not', null)
      .execute();
    return rows.map((r) => r.email as string).sort();
  }
}
