import { type Kysely, sql } from 'kysely';
import { timestamp, uuid } from './dialect.js';

/**
 * Tracking tokens (API.md section 6) and their exposures.
 *
 * - tracking_tokens: each with its material. `trigger_key` (web_bug, redirect), `username_lower`
 *   (credential) and `api_key` are unique across organizations: a trigger, a login or a bearer
 *   names one token. `password_sha1` and `api_key_sha1` are what leaked records are compared with
 *   (the corpus keeps only SHA-1s of passwords). exposure_count and last_exposed_at change in the
 *   transaction of each exposure.
 * - tracking_token_exposures: one row per recorded exposure; a leak record exposes a token once
 *   (partial unique index).
 * - tracking_token_generation: bumped with every change to tokens, so that each process's leak
 *   matcher rebuilds its index before it matches the next batch.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema
    .createTable('tracking_tokens')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('memo', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('trigger_key', 'text', (c) => c.unique())
    .addColumn('redirect_url', 'text')
    .addColumn('username', 'text')
    .addColumn('username_lower', 'text', (c) => c.unique())
    .addColumn('password', 'text')
    .addColumn('password_sha1', 'text')
    .addColumn('api_key', 'text', (c) => c.unique())
    .addColumn('api_key_sha1', 'text')
    .addColumn('ignore_ips', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('exposure_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_exposed_at', ts)
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tracking_tokens_org_created_idx').on('tracking_tokens').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('tracking_token_exposures')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('token_id', id, (c) => c.notNull().references('tracking_tokens.id').onDelete('cascade'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('occurred_at', ts, (c) => c.notNull())
    .addColumn('source_ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('referer', 'text')
    .addColumn('method', 'text')
    .addColumn('path', 'text')
    // No foreign keys: an exposure keeps naming the record and source it was found in after they go.
    .addColumn('leak_record_id', id)
    .addColumn('leak_source_id', id)
    .addColumn('leak_source_name', 'text')
    .execute();
  await db.schema.createIndex('tracking_token_exposures_token_occurred_idx').on('tracking_token_exposures').columns(['token_id', 'occurred_at', 'id']).execute();
  await db.schema.createIndex('tracking_token_exposures_token_channel_idx').on('tracking_token_exposures').columns(['token_id', 'channel', 'occurred_at', 'id']).execute();
  await db.schema
    .createIndex('tracking_token_exposures_leak_key')
    .on('tracking_token_exposures')
    .columns(['token_id', 'leak_record_id'])
    .unique()
    .where(sql.ref('leak_record_id'), 'is not', null)
    .execute();

  await db.schema
    .createTable('tracking_token_generation')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('tracking_token_generation').values({ id: 1, n: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tracking_token_generation').execute();
  await db.schema.dropTable('tracking_token_exposures').execute();
  await db.schema.dropTable('tracking_tokens').execute();
}
