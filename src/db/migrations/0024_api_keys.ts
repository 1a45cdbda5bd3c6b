import type { Kysely } from 'kysely';
import { timestamp, uuid } from './dialect.js';

/**
 * API keys for machines: each acts as its creator with its own role, stored only as the SHA-256 of
 * the key (a key is 240 random bits: no slow hash is needed to resist guessing). api_key_ips keeps
 * the addresses each key was used from, so that use from a new one is audited once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema
    .createTable('api_keys')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // A key dies with its creator.
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('expires_at', ts)
    .addColumn('last_used_at', ts)
    .execute();
  await db.schema.createIndex('api_keys_org_created_idx').on('api_keys').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').columns(['user_id']).execute();
  await db.schema
    .createTable('api_key_ips')
    .addColumn('api_key_id', id, (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('api_key_ips_pkey', ['api_key_id', 'ip'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_key_ips').execute();
  await db.schema.dropTable('api_keys').execute();
}
