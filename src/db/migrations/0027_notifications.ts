import type { Kysely } from 'kysely';
import { boolean, timestamp, uuid } from './dialect.js';

/**
 * Notification channels (e-mail, Slack, Teams, Mattermost, Discord) and their messages. A message is
 * queued in the transaction of its event; past a channel's per-minute allowance, the event waits
 * for that minute's digest instead (window_start/window_count on the channel count the minute's
 * events under its row lock). Everything a sender needs survives a restart.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  const bool = boolean(db);
  await db.schema
    .createTable('notification_channels')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('min_severity', 'text')
    .addColumn('monitors', 'text', (c) => c.notNull())
    .addColumn('tracking_tokens', 'text', (c) => c.notNull())
    .addColumn('personal_data', bool, (c) => c.notNull())
    .addColumn('per_minute', 'integer', (c) => c.notNull())
    .addColumn('is_active', bool, (c) => c.notNull())
    .addColumn('window_start', ts)
    .addColumn('window_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_success_at', ts)
    .addColumn('last_failure_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', id, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_channels_org_idx').on('notification_channels').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema
    .createTable('notification_messages')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('channel_id', id, (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The outbox event it tells of (read when it is sent: a message is not a copy of it); null for a digest.
    .addColumn('event_id', id)
    // A digest: the events it covers; null for a message of one event.
    .addColumn('data', 'text')
    .addColumn('window_start', ts, (c) => c.notNull())
    // queued (to send), digest (waits for its minute's digest), sent, digested, given_up
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('sent_at', ts)
    .execute();
  await db.schema.createIndex('notification_messages_due_idx').on('notification_messages').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('notification_messages_channel_idx').on('notification_messages').columns(['channel_id', 'status', 'window_start']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('notification_messages').execute();
  await db.schema.dropTable('notification_channels').execute();
}
