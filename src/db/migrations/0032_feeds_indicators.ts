import type { Kysely } from 'kysely';
import { boolean, timestamp, uuid } from './dialect.js';

/**
 * Feeds (intelligence pulled on a schedule) and the indicators they bring, one row per organization,
 * type and normalised value, with the feeds that gave each. A feed's cursor, counts and health move
 * in the transaction of the pull that applies its indicators; its lease says which process pulls it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  const bool = boolean(db);
  await db.schema
    .createTable('feeds')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    // {type, ...}: a secret, never answered whole after creation.
    .addColumn('auth', 'text')
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('is_active', bool, (c) => c.notNull())
    .addColumn('cursor', 'text')
    .addColumn('next_pull_at', ts, (c) => c.notNull())
    .addColumn('lease_until', ts)
    .addColumn('last_pull_at', ts)
    .addColumn('last_success_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('objects_read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('indicators_added', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('indicators_updated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('indicators_retired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rejected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reject_examples', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', id, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feeds_org_idx').on('feeds').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('feeds_due_idx').on('feeds').columns(['is_active', 'next_pull_at']).execute();
  await db.schema
    .createTable('indicators')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('stix_id', 'text')
    .addColumn('name', 'text')
    .addColumn('confidence', 'integer')
    .addColumn('tlp', 'text')
    .addColumn('labels', 'text', (c) => c.notNull())
    .addColumn('valid_until', ts)
    .addColumn('modified', ts)
    .addColumn('revoked', bool, (c) => c.notNull())
    .addColumn('false_positive', bool, (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('first_seen', ts, (c) => c.notNull())
    .addColumn('last_seen', ts, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('indicators_value_key', ['organization_id', 'type', 'value'])
    .execute();
  await db.schema.createIndex('indicators_org_idx').on('indicators').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema
    .createTable('indicator_feeds')
    .addColumn('indicator_id', id, (c) => c.notNull().references('indicators.id').onDelete('cascade'))
    .addColumn('feed_id', id, (c) => c.notNull().references('feeds.id').onDelete('cascade'))
    .addColumn('first_seen', ts, (c) => c.notNull())
    .addColumn('last_seen', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('indicator_feeds_pk', ['indicator_id', 'feed_id'])
    .execute();
  await db.schema.createIndex('indicator_feeds_feed_idx').on('indicator_feeds').columns(['feed_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('indicator_feeds').execute();
  await db.schema.dropTable('indicators').execute();
  await db.schema.dropTable('feeds').execute();
}
