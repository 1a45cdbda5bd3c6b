import type { Insertable, Kysely, Updateable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FeedRow, IndicatorRow } from './feeds.presenters.js';
import type { FeedsTable, IndicatorsTable } from './feeds.tables.js';

/** Every query of the feeds module. */
export class FeedsRepository {
  selectFeeds(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('feeds').selectAll().where('organization_id', '=', orgId);
  }

  findFeed(db: Kysely<DB>, orgId: string, id: string): Promise<FeedRow | undefined> {
    return this.selectFeeds(db, orgId).where('id', '=', id).executeTakeFirst();
  }

  async insertFeed(db: Kysely<DB>, row: Insertable<FeedsTable>): Promise<void> {
    await db.insertInto('feeds').values(row).execute();
  }

  async updateFeed(db: Kysely<DB>, id: string, set: Updateable<FeedsTable>): Promise<void> {
    await db
      .updateTable('feeds')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteFeed(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('feeds').where('id', '=', id).execute();
  }

  /** Feeds whose pull is due and that no process holds, soonest first. */
  dueFeeds(db: Kysely<DB>, now: string, limit: number): Promise<Array<{ id: string }>> {
    return db
      .selectFrom('feeds')
      .select('id')
      .where('is_active', '=', true)
      .where('url', '!=', '')
      .where('next_pull_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('next_pull_at')
      .limit(limit)
      .execute();
  }

  /** Takes the feed's lease until `until` if it is still due and free: one statement, so one process wins. */
  claim(db: Kysely<DB>, id: string, now: string, until: string): Promise<FeedRow | undefined> {
    return db
      .updateTable('feeds')
      .set({ lease_until: until })
      .where('id', '=', id)
      .where('is_active', '=', true)
      .where('next_pull_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
  }

  /** The feed's pull results, its counts added to, its lease given back. */
  async finishPull(db: Kysely<DB>, id: string, set: Updateable<FeedsTable>, counts: { objects: number; added: number; updated: number; retired: number; rejected: number; records?: number }): Promise<void> {
    await db
      .updateTable('feeds')
      .set((eb) => ({
        ...set,
        lease_until: null,
        objects_read: eb('objects_read', '+', counts.objects),
        indicators_added: eb('indicators_added', '+', counts.added),
        indicators_updated: eb('indicators_updated', '+', counts.updated),
        indicators_retired: eb('indicators_retired', '+', counts.retired),
        rejected: eb('rejected', '+', counts.rejected),
        records_added: eb('records_added', '+', counts.records ?? 0),
      }))
      .where('id', '=', id)
      .execute();
  }

  selectIndicators(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('indicators').selectAll().where('organization_id', '=', orgId);
  }

  findIndicator(db: Kysely<DB>, orgId: string, id: string): Promise<IndicatorRow | undefined> {
    return this.selectIndicators(db, orgId).where('id', '=', id).executeTakeFirst();
  }

  indicatorsByValue(db: Kysely<DB>, orgId: string, type: string, values: string[]): Promise<IndicatorRow[]> {
    return this.selectIndicators(db, orgId).where('type', '=', type).where('value', 'in', values).execute();
  }

  /**
   * Live indicators (not revoked, not a false positive, still valid) of one organization (or of all:
   * null) of a type, with one of these values (null: every one of the type).
   */
  liveIndicators(db: Kysely<DB>, orgId: string | null, type: string, values: string[] | null, now: string) {
    let q = db
      .selectFrom('indicators')
      .select(['id', 'organization_id', 'type', 'value', 'confidence', 'tlp'])
      .where('type', '=', type)
      .where('revoked', '=', false)
      .where('false_positive', '=', false)
      .where((eb) => eb.or([eb('valid_until', 'is', null), eb('valid_until', '>', now)]));
    if (orgId !== null) q = q.where('organization_id', '=', orgId);
    if (values !== null) q = q.where('value', 'in', values);
    return q.execute();
  }

  /** The CIDR indicators not revoked nor false positives (of one organization, or all: null), with when each stops being valid. */
  cidrIndicators(db: Kysely<DB>, orgId: string | null) {
    let q = db
      .selectFrom('indicators')
      .select(['id', 'organization_id', 'type', 'value', 'confidence', 'tlp', 'valid_until'])
      .where('type', '=', 'cidr')
      .where('revoked', '=', false)
      .where('false_positive', '=', false);
    if (orgId !== null) q = q.where('organization_id', '=', orgId);
    return q.execute();
  }

  /** Whether any organization (or this one) has an indicator at all: most ingests and searches then ask nothing more. */
  async anyIndicator(db: Kysely<DB>, orgId: string | null): Promise<boolean> {
    let q = db.selectFrom('indicators').select('id').limit(1);
    if (orgId !== null) q = q.where('organization_id', '=', orgId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  /** What changes when a CIDR indicator is added or changed: their count and the sum of their versions (each change adds one). */
  async cidrStamp(db: Kysely<DB>, orgId: string | null): Promise<string> {
    let q = db
      .selectFrom('indicators')
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum('version').as('at')])
      .where('type', '=', 'cidr');
    if (orgId !== null) q = q.where('organization_id', '=', orgId);
    const row = await q.executeTakeFirstOrThrow();
    return `${String(row.n)} ${String(row.at)}`;
  }

  async insertIndicators(db: Kysely<DB>, rows: Array<Insertable<IndicatorsTable>>): Promise<void> {
    if (rows.length) await db.insertInto('indicators').values(rows).execute();
  }

  async updateIndicator(db: Kysely<DB>, id: string, set: Updateable<IndicatorsTable>): Promise<void> {
    await db
      .updateTable('indicators')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Indicators a feed gave again unchanged: seen now. */
  async touchIndicators(db: Kysely<DB>, ids: string[], at: string): Promise<void> {
    if (ids.length) await db.updateTable('indicators').set({ last_seen: at }).where('id', 'in', ids).execute();
  }

  /** Ties indicators to the feed that gave them (again: its last_seen moves). */
  async linkFeed(db: Kysely<DB>, feedId: string, indicatorIds: string[], at: string): Promise<void> {
    if (!indicatorIds.length) return;
    await db
      .insertInto('indicator_feeds')
      .values(indicatorIds.map((indicator_id) => ({ indicator_id, feed_id: feedId, first_seen: at, last_seen: at })))
      .onConflict((oc) => oc.columns(['indicator_id', 'feed_id']).doUpdateSet({ last_seen: at }))
      .execute();
  }

  /** The feeds of each of these indicators, by name. */
  async feedsOf(db: Kysely<DB>, indicatorIds: string[]): Promise<Map<string, Array<{ id: string; name: string }>>> {
    const out = new Map<string, Array<{ id: string; name: string }>>();
    if (!indicatorIds.length) return out;
    const rows = await db
      .selectFrom('indicator_feeds')
      .innerJoin('feeds', 'feeds.id', 'indicator_feeds.feed_id')
      .select(['indicator_feeds.indicator_id', 'feeds.id', 'feeds.name'])
      .where('indicator_feeds.indicator_id', 'in', indicatorIds)
      .orderBy('feeds.name')
      .execute();
    for (const r of rows) {
      const list = out.get(r.indicator_id);
      if (list) list.push({ id: r.id, name: r.name });
      else out.set(r.indicator_id, [{ id: r.id, name: r.name }]);
    }
    return out;
  }

  /** Marks a feed due now (a sync), unless a process holds it. */
  async dueNow(db: Kysely<DB>, id: string, now: string): Promise<void> {
    await db.updateTable('feeds').set({ next_pull_at: now }).where('id', '=', id).execute();
  }
}

