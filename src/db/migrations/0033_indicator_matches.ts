import type { Kysely } from 'kysely';

/**
 * Indicators put to work: an exposure keeps the indicators that named its address, URL or user agent
 * when it happened (JSON, `[]` for none), and indicators are found by type and value across
 * organizations (ingested leak records are matched against every organization's); an hibp feed
 * counts the records it added to the corpus.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tracking_token_exposures').addColumn('indicator_matches', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.createIndex('indicators_type_value_idx').on('indicators').columns(['type', 'value']).execute();
  // An hibp feed's new records in the leak corpus.
  await db.schema.alterTable('feeds').addColumn('records_added', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('feeds').dropColumn('records_added').execute();
  await db.schema.dropIndex('indicators_type_value_idx').execute();
  await db.schema.alterTable('tracking_token_exposures').dropColumn('indicator_matches').execute();
}
