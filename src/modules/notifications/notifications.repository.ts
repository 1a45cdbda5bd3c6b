import { type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { NotificationChannelsTable, NotificationMessagesTable } from './notifications.tables.js';

export type ChannelRow = Selectable<NotificationChannelsTable>;
export type MessageRow = Selectable<NotificationMessagesTable>;

/** Every query of the notifications module. */
export class NotificationsRepository {
  constructor(private readonly dialect: 'sqlite' | 'postgres') {}

  selectChannels(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('notification_channels').selectAll().where('organization_id', '=', orgId);
  }

  findChannel(db: Kysely<DB>, orgId: string, id: string): Promise<ChannelRow | undefined> {
    return this.selectChannels(db, orgId).where('id', '=', id).executeTakeFirst();
  }

  async insertChannel(db: Kysely<DB>, row: Omit<ChannelRow, 'version' | 'window_count' | 'consecutive_failures'>): Promise<void> {
    await db.insertInto('notification_channels').values(row).execute();
  }

  async updateChannel(db: Kysely<DB>, id: string, set: Updateable<NotificationChannelsTable>): Promise<void> {
    await db
      .updateTable('notification_channels')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteChannel(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('notification_channels').where('id', '=', id).execute();
  }

  /** The active channels of these organizations, by id: transactions lock their rows in one order (no deadlock). */
  activeChannels(db: Kysely<DB>, orgIds: string[]): Promise<ChannelRow[]> {
    return db.selectFrom('notification_channels').selectAll().where('organization_id', 'in', orgIds).where('is_active', '=', true).orderBy('id').execute();
  }

  /**
   * Counts `n` more events into the channel's minute `window` and answers how many it held before:
   * one statement under the channel's row lock, so concurrent transactions count in turn.
   */
  async countIntoWindow(db: Kysely<DB>, channelId: string, window: string, n: number): Promise<number> {
    const row = await db
      .updateTable('notification_channels')
      .set((eb) => ({
        window_count: eb.case().when('window_start', '=', window).then(eb('window_count', '+', n)).else(n).end(),
        window_start: window,
      }))
      .where('id', '=', channelId)
      .returning('window_count')
      .executeTakeFirstOrThrow();
    return Number(row.window_count) - n;
  }

  async insertMessages(db: Kysely<DB>, rows: Array<Omit<MessageRow, 'attempts'>>): Promise<void> {
    if (this.dialect === 'postgres' && rows.length > 1) {
      // One statement of nine arrays instead of rows of parameters: an ingest batch queues a
      // message per (alert, channel), thousands at once, inside the ingest's transaction.
      const col = <K extends keyof MessageRow>(k: K) => rows.map((r) => (r as MessageRow)[k]);
      await sql`insert into notification_messages (id, channel_id, event_type, event_id, data, window_start, status, next_attempt_at, created_at)
        select * from unnest(${col('id')}::uuid[], ${col('channel_id')}::uuid[], ${col('event_type')}::text[], ${col('event_id')}::uuid[], ${col('data')}::text[],
                             ${col('window_start')}::timestamptz[], ${col('status')}::text[], ${col('next_attempt_at')}::timestamptz[], ${col('created_at')}::timestamptz[])`.execute(db);
      return;
    }
    for (let i = 0; i < rows.length; i += 500) await db.insertInto('notification_messages').values(rows.slice(i, i + 500)).execute();
  }

  /** Minutes that ended (started at or before `before`) with events waiting for their digest. */
  closedWindows(db: Kysely<DB>, before: string) {
    return db
      .selectFrom('notification_messages')
      .select(['channel_id', 'window_start'])
      .distinct()
      .where('status', '=', 'digest')
      .where('window_start', '<=', before)
      .limit(100)
      .execute();
  }

  /** The events waiting for a minute's digest, with their data from the outbox. */
  digestItems(db: Kysely<DB>, channelId: string, window: string) {
    return db
      .selectFrom('notification_messages as m')
      .innerJoin('events as e', 'e.id', 'm.event_id')
      .select(['m.id', 'm.event_type', 'e.data'])
      .where('m.channel_id', '=', channelId)
      .where('m.status', '=', 'digest')
      .where('m.window_start', '=', window)
      .orderBy('m.created_at')
      .orderBy('m.id')
      .execute();
  }

  /** The data of these outbox events. */
  async eventData(db: Kysely<DB>, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await db.selectFrom('events').select(['id', 'data']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.data]));
  }

  async markDigested(db: Kysely<DB>, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      await db.updateTable('notification_messages').set({ status: 'digested' }).where('id', 'in', ids.slice(i, i + 500)).execute();
    }
  }

  /**
   * Claims up to `limit` messages due at `now`: their next attempt moves to `leaseUntil`, so that
   * no other worker takes them meanwhile (one whose worker died is taken again after the lease).
   */
  async claimDue(db: Kysely<DB>, now: string, leaseUntil: string, limit: number): Promise<MessageRow[]> {
    // A disabled channel's messages wait unclaimed (their attempts untouched) until it is active again.
    const due = await db
      .selectFrom('notification_messages as m')
      .innerJoin('notification_channels as c', 'c.id', 'm.channel_id')
      .select('m.id')
      .where('m.status', '=', 'queued')
      .where('m.next_attempt_at', '<=', now)
      .where('c.is_active', '=', true)
      .orderBy('m.next_attempt_at')
      .limit(limit)
      .execute();
    if (due.length === 0) return [];
    return db
      .updateTable('notification_messages')
      .set((eb) => ({ next_attempt_at: leaseUntil, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', due.map((d) => d.id))
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now)
      .returningAll()
      .execute();
  }

  channelsByIds(db: Kysely<DB>, ids: string[]): Promise<ChannelRow[]> {
    return db.selectFrom('notification_channels').selectAll().where('id', 'in', ids).execute();
  }

  async settleMessage(db: Kysely<DB>, id: string, set: Updateable<NotificationMessagesTable>): Promise<void> {
    await db.updateTable('notification_messages').set(set).where('id', '=', id).execute();
  }

  /** A channel's health after an attempt. */
  async recordOutcome(db: Kysely<DB>, channelId: string, ok: boolean, at: string, error: string | null): Promise<number> {
    const row = await db
      .updateTable('notification_channels')
      .set((eb) =>
        ok
          ? { last_success_at: at, consecutive_failures: 0 }
          : { last_failure_at: at, last_error: error, consecutive_failures: eb('consecutive_failures', '+', 1) },
      )
      .where('id', '=', channelId)
      .returning(['consecutive_failures', 'organization_id'])
      .executeTakeFirst();
    return Number(row?.consecutive_failures ?? 0);
  }

  /** Removes messages that are done (sent, digested, given up) and were queued before `before`. */
  async prune(db: Kysely<DB>, before: string): Promise<void> {
    await db.deleteFrom('notification_messages').where('status', 'in', ['sent', 'digested', 'given_up']).where('created_at', '<', before).execute();
  }

  /** Messages of a channel by status (tests and figures). */
  async countByStatus(db: Kysely<DB>, channelId: string): Promise<Record<string, number>> {
    const rows = await db.selectFrom('notification_messages').select(['status', (eb) => eb.fn.countAll().as('n')]).where('channel_id', '=', channelId).groupBy('status').execute();
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }
}
