import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { MonitorScansTable } from './monitoring.tables.js';

export type ScanRow = Selectable<MonitorScansTable>;

/** A leak record with what the matcher reads, and the scan's position after it. */
export interface CandidateRow {
  id: string;
  email: string | null;
  username: string | null;
  username_lower: string | null;
  domain: string | null;
  ip: string | null;
  phone: string | null;
  full_name: string | null;
  extra: string;
  severity: string;
  created_at: string;
  key: string | null;
}

/** An indexed column of leak_records, with its (column, created_at, id) index. */
export type KeyColumn = 'email' | 'username_lower' | 'domain_rev' | 'email_domain_rev' | 'ip_key';

/** The keys from `from` up to `to` (inclusive) or to `below` (exclusive). */
export interface KeyRange {
  column: KeyColumn;
  from: string;
  to?: string;
  below?: string;
}

const CANDIDATE_COLUMNS = ['id', 'email', 'username', 'username_lower', 'domain', 'ip', 'phone', 'full_name', 'extra', 'severity', 'created_at'] as const;

/** The queries of monitor scans. */
export class ScansRepository {
  async insert(db: Kysely<DB>, row: Insertable<MonitorScansTable>): Promise<void> {
    await db.insertInto('monitor_scans').values(row).execute();
  }

  /** The monitor's queued scan, if there is one: a scan requested meanwhile joins it. */
  queuedFor(db: Kysely<DB>, monitorId: string): Promise<ScanRow | undefined> {
    return db.selectFrom('monitor_scans').selectAll().where('monitor_id', '=', monitorId).where('status', '=', 'queued').executeTakeFirst();
  }

  selectScans(db: Kysely<DB>, orgId: string, monitorId: string) {
    return db.selectFrom('monitor_scans').selectAll().where('organization_id', '=', orgId).where('monitor_id', '=', monitorId);
  }

  find(db: Kysely<DB>, orgId: string, monitorId: string, id: string): Promise<ScanRow | undefined> {
    return this.selectScans(db, orgId, monitorId).where('id', '=', id).executeTakeFirst();
  }

  /**
   * Takes one scan to run: a running one this runner holds or whose lease ran out (its runner stopped), else the oldest
   * queued one of a monitor with no scan running. The update re-checks what the select saw, so
   * two processes never take the same scan (whoever updates second changes nothing).
   */
  async claim(db: Kysely<DB>, owner: string, now: string, leaseUntil: string): Promise<ScanRow | undefined> {
    const stale = await db
      .selectFrom('monitor_scans')
      .select('id')
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    if (stale) {
      const taken = await db
        .updateTable('monitor_scans')
        .set({ lease_owner: owner, lease_until: leaseUntil })
        .where('id', '=', stale.id)
        .where('status', '=', 'running')
        .where((eb) => eb.or([eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
        .returningAll()
        .executeTakeFirst();
      if (taken) return taken;
    }
    const queued = await db
      .selectFrom('monitor_scans as s')
      .select('s.id')
      .where('s.status', '=', 'queued')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('monitor_scans as r').select('r.id').whereRef('r.monitor_id', '=', 's.monitor_id').where('r.status', '=', 'running'))))
      .orderBy('s.created_at')
      .limit(1)
      .executeTakeFirst();
    if (!queued) return undefined;
    try {
      return await db
        .updateTable('monitor_scans')
        .set((eb) => ({
          status: 'running',
          lease_owner: owner,
          lease_until: leaseUntil,
          started_at: now,
          // The terms as they are when the scan starts: its cursor counts in them.
          terms: eb.selectFrom('monitors').select('monitors.terms').whereRef('monitors.id', '=', 'monitor_scans.monitor_id'),
        }))
        .where('id', '=', queued.id)
        .where('status', '=', 'queued')
        .returningAll()
        .executeTakeFirst();
    } catch (err) {
      // Another process started this monitor's queued scan first (one running per monitor).
      if (/unique|duplicate/i.test(String((err as Error).message))) return undefined;
      throw err;
    }
  }

  /**
   * Moves a scan's cursor and figures, and renews its lease, if `owner` still holds it: false when
   * another process has taken the scan over (or it is gone with its monitor), and the caller's
   * transaction must not commit.
   */
  async advance(db: Kysely<DB>, id: string, owner: string, set: { cursor: string; scanned: number; alerts: number; leaseUntil: string }): Promise<boolean> {
    const r = await db
      .updateTable('monitor_scans')
      .set((eb) => ({
        cursor: set.cursor,
        records_scanned: eb('records_scanned', '+', set.scanned),
        alerts_raised: eb('alerts_raised', '+', set.alerts),
        lease_until: set.leaseUntil,
      }))
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Ends a scan its runner holds, and sets its monitor's last_scan_at. */
  async complete(db: Kysely<DB>, id: string, owner: string, at: string): Promise<ScanRow | undefined> {
    const done = await db
      .updateTable('monitor_scans')
      .set({ status: 'completed', finished_at: at, lease_owner: null, lease_until: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'running')
      .returningAll()
      .executeTakeFirst();
    if (done) await db.updateTable('monitors').set({ last_scan_at: at }).where('id', '=', done.monitor_id).execute();
    return done;
  }

  /** Lets go of a scan's lease (a runner stopping between chunks): any process may go on with it. */
  async release(db: Kysely<DB>, id: string, owner: string, now: string): Promise<void> {
    await db.updateTable('monitor_scans').set({ lease_until: now }).where('id', '=', id).where('lease_owner', '=', owner).where('status', '=', 'running').execute();
  }

  /**
   * The next records of one key range after `after` (its key, created_at and id), in the order of
   * the column's (column, created_at, id) index: a scan reads the index, never the whole table.
   */
  async byKey(db: Kysely<DB>, range: KeyRange, after: [string, string, string] | null, limit: number): Promise<CandidateRow[]> {
    const col = sql.ref(`leak_records.${range.column}`);
    let qb = db
      .selectFrom('leak_records')
      .select([...CANDIDATE_COLUMNS.map((c) => `leak_records.${c}` as const), sql<string>`${col}`.as('key')])
      .where(range.column, '>=', range.from);
    if (range.to !== undefined) qb = qb.where(range.column, '<=', range.to);
    if (range.below !== undefined) qb = qb.where(range.column, '<', range.below);
    if (after) qb = qb.where(sql<boolean>`(${col}, leak_records.created_at, leak_records.id) > (${after[0]}, ${after[1]}, ${after[2]})`);
    return (await qb.orderBy(range.column).orderBy('created_at').orderBy('id').limit(limit).execute()) as CandidateRow[];
  }

  /** The next records after id `after`, in id order: a keyword scan reads the corpus in chunks. */
  async byId(db: Kysely<DB>, after: string | null, limit: number): Promise<CandidateRow[]> {
    let qb = db.selectFrom('leak_records').select([...CANDIDATE_COLUMNS, sql<null>`null`.as('key')]);
    if (after) qb = qb.where('id', '>', after);
    return (await qb.orderBy('id').limit(limit).execute()) as CandidateRow[];
  }
}
