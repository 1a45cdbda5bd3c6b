import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * What a leak source is, as breach catalogues say it: its kind (breach, combolist, stealer_log,
 * paste, other; existing sources are breaches) and the flags is_fabricated, is_sensitive and
 * is_spam_list beside is_verified.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const no = pg ? sql`false` : sql`0`;
  await db.schema.alterTable('leak_sources').addColumn('kind', 'text', (c) => c.notNull().defaultTo('breach')).execute();
  for (const flag of ['is_fabricated', 'is_sensitive', 'is_spam_list']) {
    await db.schema.alterTable('leak_sources').addColumn(flag, pg ? 'boolean' : 'integer', (c) => c.notNull().defaultTo(no)).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['kind', 'is_fabricated', 'is_sensitive', 'is_spam_list']) await db.schema.alterTable('leak_sources').dropColumn(column).execute();
}
