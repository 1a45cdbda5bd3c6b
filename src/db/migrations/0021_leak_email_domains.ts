import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import { createLeakIndex, dropLeakIndex } from './leak-indexes.js';

/**
 * A record's e-mail domain, where it is not the record's `domain` (a stealer-log line's site, a
 * dump's own domain column): email_domain_rev, reversed like domain_rev, with a partial index of
 * the same shape. A domain monitor matches both at ingest; its scans (backfill, re-scan) read only
 * domain_rev and so missed these records. Existing records are filled in here, and a bulk load in
 * progress (SQLite) gets the index with its others when it ends.
 *
 * The reversal is a frozen copy of domain/leak-record.ts's reverseDomain when this was added.
 */
const reverseDomain = (domain: string) => `${domain.split('.').reverse().join('.')}.`;
const INDEX = 'create index leak_records_email_domain_rev_idx on leak_records (email_domain_rev, created_at, id) where email_domain_rev is not null';
const CHUNK = 5_000;

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .alterTable('leak_records')
    .addColumn('email_domain_rev', pg ? sql`text collate "C"` : sql`text`)
    .execute();
  // Only a record whose domain was given apart from its e-mail can differ: the rest took the e-mail's.
  const atDomain = pg ? sql`substr(email, strpos(email, '@') + 1)` : sql`substr(email, instr(email, '@') + 1)`;
  let after: string | null = null;
  for (;;) {
    const { rows } = await sql<{ id: string; email: string }>`select id, email from leak_records
      where ${after === null ? sql`true` : sql`id > ${after}`} and email is not null and domain is not null and domain <> ${atDomain}
      order by id limit ${CHUNK}`.execute(db);
    for (const r of rows) {
      await sql`update leak_records set email_domain_rev = ${reverseDomain(r.email.slice(r.email.lastIndexOf('@') + 1))} where id = ${r.id}`.execute(db);
    }
    if (rows.length < CHUNK) break;
    after = (rows.at(-1) as { id: string }).id;
  }
  await createLeakIndex(db, 'leak_records_email_domain_rev_idx', INDEX);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropLeakIndex(db, 'leak_records_email_domain_rev_idx');
  await db.schema.alterTable('leak_records').dropColumn('email_domain_rev').execute();
}
