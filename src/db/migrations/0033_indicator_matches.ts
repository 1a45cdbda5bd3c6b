import type { Kysely } from 'kysely';

/**
 * Indicators put to work: an exposure keeps the indicators that named its address, URL or user agent
 * when it happened (JSON, `[]` for none), and indicators are found by type and value across
 * organizations (ingested leak records are matched against every organization's).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tracking_token_exposures').addColumn('indicator_matches', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.createIndex('indicators_type_value_idx').on('indicators').columns(['type', 'value']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('indicators_type_value_idx').execute();
  await db.schema.alterTable('tracking_token_exposures').dropColumn('indicator_matches').execute();
}
