import { type Kysely, sql } from 'kysely';

/**
 * A webhook's pending messages in due order (partial: delivered and dead ones are left out), so that
 * the delivery worker claims per webhook, reading only the head of each queue it has room for. The
 * claim used to read every due message, skipping those of webhooks at their concurrency bound: with
 * a backlog, each claim read all of it and found nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_messages_pending_idx')
    .on('webhook_messages')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_messages_pending_idx').execute();
}
