import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * Leak records per reversed domain ("com.example.mail."), kept in the same transaction as every
 * insert and delete of records: a domain search counts from here (a key range of this small table)
 * and pages through each matching domain's own index range, instead of counting and sorting every
 * record of a large domain.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const bytewise = isPostgres(db) ? sql`text collate "C"` : sql`text`;
  await db.schema
    .createTable('leak_domain_counts')
    .addColumn('key', bytewise, (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await sql`insert into leak_domain_counts (key, n)
    select domain_rev, count(*) from leak_records where domain_rev is not null group by domain_rev`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leak_domain_counts').execute();
}
