import type { ExpressionBuilder, Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { WebhookAttemptsTable, WebhookMessagesTable, WebhooksTable } from './webhooks.tables.js';
import type { Dialect } from '../../db/database.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type MessageRow = Selectable<WebhookMessagesTable>;

/** Every query of the webhooks module. */
export class WebhooksRepository {
  constructor(private readonly dialect: Dialect) {}

  selectWebhooks(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('webhooks').selectAll().where('webhooks.organization_id', '=', orgId);
  }

  find(db: Kysely<DB>, orgId: string, id: string): Promise<WebhookRow | undefined> {
    return this.selectWebhooks(db, orgId).where('id', '=', id).executeTakeFirst();
  }

  byIds(db: Kysely<DB>, ids: string[]): Promise<WebhookRow[]> {
    return db.selectFrom('webhooks').selectAll().where('id', 'in', ids).execute();
  }

  async insert(db: Kysely<DB>, row: Insertable<WebhooksTable>): Promise<void> {
    await db.insertInto('webhooks').values(row).execute();
  }

  async update(db: Kysely<DB>, id: string, set: Partial<Pick<WebhookRow, 'url' | 'events' | 'description' | 'is_active' | 'failure_count' | 'secret' | 'previous_secret' | 'previous_secret_until' | 'updated_at'>>): Promise<void> {
    await db
      .updateTable('webhooks')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async remove(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('webhooks').where('id', '=', id).execute();
  }

  /** The active webhooks of these organizations, for the events being recorded. */
  activeFor(db: Kysely<DB>, orgIds: string[]) {
    return db.selectFrom('webhooks').select(['id', 'organization_id', 'events']).where('organization_id', 'in', orgIds).where('is_active', '=', true).execute();
  }

  async insertMessages(db: Kysely<DB>, rows: Array<Insertable<WebhookMessagesTable>>): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('webhook_messages')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
        .execute();
    }
  }

  /** The ids of the active webhooks: the queues the delivery worker claims from. */
  async activeIds(db: Kysely<DB>): Promise<string[]> {
    return (await db.selectFrom('webhooks').select('id').where('is_active', '=', true).execute()).map((r) => r.id);
  }

  /**
   * Takes due messages under a lease until `leaseUntil`: of each webhook named, up to its room, the
   * longest due first. Each webhook's queue is read from its head (webhook_messages_pending_idx),
   * never a backlog of others. PostgreSQL: FOR UPDATE SKIP LOCKED, so nodes claiming at once take
   * different rows; SQLite has one writer, and the update re-checks the lease.
   */
  async claim(db: Kysely<DB>, now: string, leaseUntil: string, rooms: ReadonlyArray<{ webhookId: string; room: number }>): Promise<MessageRow[]> {
    if (rooms.length === 0) return [];
    const notLeased = (eb: ExpressionBuilder<DB, 'webhook_messages'>) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]);
    const heads = rooms.map(({ webhookId, room }) => {
      let head = db
        .selectFrom('webhook_messages')
        .select('id')
        .where('webhook_id', '=', webhookId)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where(notLeased)
        .orderBy('next_attempt_at')
        .limit(room);
      if (this.dialect === 'postgres') head = head.forUpdate().skipLocked();
      // Wrapped: a branch of a union cannot have its own ORDER BY and LIMIT.
      return db.selectFrom(head.as('head')).select('head.id');
    });
    const due = heads.slice(1).reduce((all, head) => all.unionAll(head), heads[0]!);
    return db.updateTable('webhook_messages').set({ lease_until: leaseUntil }).where('id', 'in', due).where(notLeased).returningAll().execute();
  }

  async logAttempt(db: Kysely<DB>, row: Insertable<WebhookAttemptsTable>): Promise<void> {
    await db.insertInto('webhook_attempts').values(row).execute();
  }

  async logAttempts(db: Kysely<DB>, rows: Array<Insertable<WebhookAttemptsTable>>): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('webhook_attempts').values(rows.slice(i, i + 500)).execute();
  }

  /** Messages delivered: done, and each of their webhooks' consecutive failures back to 0. */
  async delivered(db: Kysely<DB>, messages: MessageRow[], at: string): Promise<void> {
    for (let i = 0; i < messages.length; i += 500) {
      await db
        .updateTable('webhook_messages')
        .set((eb) => ({ status: 'delivered', attempts: eb('attempts', '+', 1), lease_until: null, finished_at: at }))
        .where(
          'id',
          'in',
          messages.slice(i, i + 500).map((m) => m.id),
        )
        .execute();
    }
    await db
      .updateTable('webhooks')
      .set({ failure_count: 0, last_delivery_at: at })
      .where('id', 'in', [...new Set(messages.map((m) => m.webhook_id))])
      .execute();
  }

  /** A failed attempt: retried at `retryAt`, or given up (null). The webhook's consecutive failures go up; at `disableAt` it is disabled. */
  async failed(db: Kysely<DB>, message: MessageRow, at: string, retryAt: string | null, disableAt: number): Promise<void> {
    await db
      .updateTable('webhook_messages')
      .set({ attempts: message.attempts + 1, lease_until: null, ...(retryAt ? { next_attempt_at: retryAt } : { status: 'failed', finished_at: at }) })
      .where('id', '=', message.id)
      .execute();
    await db
      .updateTable('webhooks')
      .set((eb) => ({ failure_count: eb('failure_count', '+', 1) }))
      .where('id', '=', message.webhook_id)
      .execute();
    await db
      .updateTable('webhooks')
      .set((eb) => ({ is_active: false, version: eb('version', '+', 1) }))
      .where('id', '=', message.webhook_id)
      .where('failure_count', '>=', disableAt)
      .where('is_active', '=', true)
      .execute();
  }

  selectAttempts(db: Kysely<DB>, webhookId: string) {
    return db.selectFrom('webhook_attempts').selectAll().where('webhook_attempts.webhook_id', '=', webhookId);
  }

  async queueDepth(db: Kysely<DB>): Promise<number> {
    return Number((await db.selectFrom('webhook_messages').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow()).n);
  }

  /** Deletes what is older than `before`: finished messages, attempts and outbox events. */
  async prune(db: Kysely<DB>, before: string): Promise<void> {
    await db.deleteFrom('webhook_messages').where('finished_at', '<', before).execute();
    await db.deleteFrom('webhook_attempts').where('created_at', '<', before).execute();
    await db.deleteFrom('events').where('created_at', '<', before).execute();
  }
}
