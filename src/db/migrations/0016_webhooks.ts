import type { Kysely } from 'kysely';
import { boolean, timestamp, uuid } from './dialect.js';

/**
 * Webhooks (API.md section 7).
 *
 * - webhooks: each with its secret (and, for 24 hours after a rotation, the previous one, which
 *   signs too). failure_count counts consecutive failed deliveries (test pings aside).
 * - webhook_messages: one per (event, webhook subscribed to it), written in the transaction of the
 *   event itself (so of its change): the delivery queue. A worker claims due messages under a lease;
 *   each attempt is logged in webhook_attempts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema
    .createTable('webhooks')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_active', boolean(db), (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', ts)
    .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_delivery_at', ts)
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_org_created_idx').on('webhooks').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('webhook_id', id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', id, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('lease_until', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('finished_at', ts)
    .addUniqueConstraint('webhook_messages_event_key', ['webhook_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_messages_due_idx').on('webhook_messages').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_messages_finished_idx').on('webhook_messages').columns(['finished_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('webhook_id', id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', id, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_attempts_webhook_created_idx').on('webhook_attempts').columns(['webhook_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('webhook_attempts_created_idx').on('webhook_attempts').columns(['created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_messages').execute();
  await db.schema.dropTable('webhooks').execute();
}
