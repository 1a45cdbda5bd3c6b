import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { jsonObjectText } from '../../db/json.js';
import type { Dialect } from '../../db/database.js';
import { RECORD_JSON } from '../leaks/index.js';
import type { DB } from '../../db/schema.js';
import type { MonitorAlertsTable, MonitorsTable } from './monitoring.tables.js';
import type { ActiveMonitor } from './monitoring.matcher.js';

export type MonitorRow = Selectable<MonitorsTable>;

/** Count keys folded per transaction (see foldAlertCounts). */
export const FOLD_KEYS = 500;

/** The statuses of an alert still to be dealt with (a monitor's alerts_open). */
export const OPEN_STATUSES = ['new', 'acknowledged'];
/** A monitor with its alert figures, counted from its alerts. */
export type MonitorWithFigures = MonitorRow & { alert_count: number | string; alerts_open: number | string; last_match_at: string | null };

export type AlertRow = Selectable<MonitorAlertsTable> & { monitor_name: string };

/**
 * An alert as the JSON text of AlertSchema (as presentAlert shows it), its leak record's JSON as
 * the alert keeps it (migration 0020), written by the database by concatenation: a page of alerts
 * reaches the response without being decoded and encoded again row by row, and without joining
 * each alert to its record. test/modules/monitoring.test.ts holds it to presentAlert, field by field.
 */
const alertJson = (dialect: Dialect) =>
  jsonObjectText(dialect, [
    { key: 'id', plain: 'monitor_alerts.id' },
    { key: 'monitor', expr: jsonObjectText(dialect, [{ key: 'id', plain: 'monitor_alerts.monitor_id' }, { key: 'name', text: 'monitors.name' }]) },
    { key: 'severity', plain: 'monitor_alerts.severity' },
    { key: 'status', plain: 'monitor_alerts.status' },
    { key: 'matched_term', text: 'monitor_alerts.matched_term' },
    { key: 'matched_field', text: 'monitor_alerts.matched_field' },
    { key: 'leak_record', raw: 'monitor_alerts.record_json' },
    { key: 'incident', plain: 'monitor_alerts.incident_id' },
    { key: 'note', text: 'monitor_alerts.note' },
    { key: 'created_at', time: 'monitor_alerts.created_at' },
    { key: 'updated_at', time: 'monitor_alerts.updated_at' },
  ]);

/** The JSON text of an alert's record, as the alert keeps it in record_json (in an update of monitor_alerts). */
const recordJsonOf = (dialect: Dialect) =>
  sql<string>`(select ${RECORD_JSON[dialect]} from leak_records inner join leak_sources on leak_sources.id = leak_records.source_id where leak_records.id = monitor_alerts.leak_record_id)`;

/** Which alerts to count: the organization's, or one monitor's; statuses and severities (null: any). */
export interface AlertCountFilter {
  monitorId?: string;
  statuses: string[] | null;
  severities: string[] | null;
}

/** Every query of the monitoring module. */
export class MonitoringRepository {
  private readonly alertJson: RawBuilder<string>;

  constructor(private readonly dialect: Dialect) {
    this.alertJson = alertJson(dialect);
  }

  /** Alerts joined to their monitors: what an alert shows (its leak record's JSON it keeps). */
  private joined(db: Kysely<DB>) {
    return db.selectFrom('monitor_alerts').innerJoin('monitors', 'monitors.id', 'monitor_alerts.monitor_id');
  }

  /** Alerts, each with its monitor's name. */
  private alerts(db: Kysely<DB>) {
    return this.joined(db).selectAll('monitor_alerts').select('monitors.name as monitor_name');
  }

  /** The organization's alerts, each as its JSON text (see alertJson) in `json`, for a page of the list. */
  selectAlertJson(db: Kysely<DB>, orgId: string) {
    return this.joined(db).select(this.alertJson.as('json')).where('monitor_alerts.organization_id', '=', orgId);
  }

  /**
   * After a leak source's rename: the record JSON its records' alerts keep, written again (in the
   * rename's transaction, so that no alert shows the old name once it commits).
   */
  async rewriteRecordJson(db: Kysely<DB>, sourceId: string): Promise<void> {
    await this.writeRecordJson(db)
      .where('leak_record_id', 'in', (eb) => eb.selectFrom('leak_records').select('id').where('source_id', '=', sourceId))
      .execute();
  }

  /** The organization's alerts, without their monitors and records (to count them). */
  alertsOnly(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('monitor_alerts').where('monitor_alerts.organization_id', '=', orgId);
  }

  /**
   * How many alerts of the organization (or of one monitor) have these statuses and severities (null:
   * any), from monitor_alert_counts: the sum of the delta rows its triggers append (migration 0018).
   */
  async countAlerts(db: Kysely<DB>, orgId: string, filter: AlertCountFilter): Promise<number> {
    return Number((await this.alertCountQuery(db, orgId, filter).executeTakeFirst())?.n ?? 0);
  }

  /** countAlerts as a query of one row (`n`: null when nothing is counted), to read with a page (see Listing.page). */
  alertCountQuery(db: Kysely<DB>, orgId: string, filter: AlertCountFilter) {
    let q = db.selectFrom('monitor_alert_counts').select((eb) => eb.fn.sum<number | string>('n').as('n')).where('organization_id', '=', orgId);
    if (filter.monitorId) q = q.where('monitor_id', '=', filter.monitorId);
    if (filter.statuses) q = q.where('status', 'in', filter.statuses);
    if (filter.severities) q = q.where('severity', 'in', filter.severities);
    return q;
  }

  /**
   * Folds the count rows of up to `limit` keys that have more than one (or that sum to zero) into
   * one row each; the number of keys folded. The rows are deleted and their sums written back in one
   * transaction, from what the delete returned: a row appended meanwhile by another transaction is
   * not among them, and stays to be folded next time.
   */
  async foldAlertCounts(db: Kysely<DB>, limit = FOLD_KEYS): Promise<number> {
    return db.transaction().execute(async (trx) => {
      const monitors = await trx
        .selectFrom('monitor_alert_counts')
        .select('monitor_id')
        .groupBy(['monitor_id', 'status', 'severity'])
        .having((eb) => eb.or([eb(eb.fn.countAll(), '>', 1), eb(eb.fn.sum('n'), '=', 0)]))
        .limit(limit)
        .execute();
      if (monitors.length === 0) return 0;
      const gone = await trx
        .deleteFrom('monitor_alert_counts')
        .where('monitor_id', 'in', [...new Set(monitors.map((m) => m.monitor_id))])
        .returning(['organization_id', 'monitor_id', 'status', 'severity', 'n'])
        .execute();
      const sums = new Map<string, { organization_id: string; monitor_id: string; status: string; severity: string; n: number }>();
      for (const r of gone) {
        const key = `${r.monitor_id} ${r.status} ${r.severity}`;
        const sum = sums.get(key);
        if (sum) sum.n += Number(r.n);
        else sums.set(key, { ...r, n: Number(r.n) });
      }
      const rows = [...sums.values()].filter((r) => r.n !== 0);
      for (let i = 0; i < rows.length; i += 500) await trx.insertInto('monitor_alert_counts').values(rows.slice(i, i + 500)).execute();
      return monitors.length;
    });
  }

  /** The organization's alerts. */
  selectAlerts(db: Kysely<DB>, orgId: string) {
    return this.alerts(db).where('monitor_alerts.organization_id', '=', orgId);
  }

  async findAlert(db: Kysely<DB>, orgId: string, id: string): Promise<AlertRow | undefined> {
    return (await this.selectAlerts(db, orgId).where('monitor_alerts.id', '=', id).executeTakeFirst()) as AlertRow | undefined;
  }

  /** Changes alerts of the organization and bumps their version; the ids it changed. */
  async updateAlerts(db: Kysely<DB>, orgId: string, ids: string[], set: { status?: string; note?: string; incident_id?: string; updated_at: string }): Promise<string[]> {
    const found = (await db.selectFrom('monitor_alerts').select('id').where('organization_id', '=', orgId).where('id', 'in', ids).execute()).map((r) => r.id);
    if (found.length) {
      await db
        .updateTable('monitor_alerts')
        .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
        .where('id', 'in', found)
        .execute();
    }
    return found;
  }

  /** The organization's monitors with their alert figures, for a list or one of them. */
  selectMonitors(db: Kysely<DB>, orgId: string) {
    return db
      .selectFrom('monitors')
      .selectAll('monitors')
      .select((eb) => [
        // From the counts the triggers keep (see countAlerts), not from the alerts themselves.
        eb.selectFrom('monitor_alert_counts').select((e) => e.fn.coalesce(e.fn.sum<number>('n'), e.lit(0)).as('n')).whereRef('monitor_alert_counts.monitor_id', '=', 'monitors.id').as('alert_count'),
        eb
          .selectFrom('monitor_alert_counts')
          .select((e) => e.fn.coalesce(e.fn.sum<number>('n'), e.lit(0)).as('n'))
          .whereRef('monitor_alert_counts.monitor_id', '=', 'monitors.id')
          .where('monitor_alert_counts.status', 'in', OPEN_STATUSES)
          .as('alerts_open'),
        eb.selectFrom('monitor_alerts').select((e) => e.fn.max('created_at').as('m')).whereRef('monitor_alerts.monitor_id', '=', 'monitors.id').as('last_match_at'),
      ])
      .where('monitors.organization_id', '=', orgId);
  }

  async findMonitor(db: Kysely<DB>, orgId: string, id: string): Promise<MonitorWithFigures | undefined> {
    return (await this.selectMonitors(db, orgId).where('monitors.id', '=', id).executeTakeFirst()) as MonitorWithFigures | undefined;
  }

  async insertMonitor(db: Kysely<DB>, row: Insertable<MonitorsTable>): Promise<void> {
    await db.insertInto('monitors').values(row).execute();
  }

  /** Changes a monitor and bumps its version (the ETag). */
  async updateMonitor(db: Kysely<DB>, id: string, set: Partial<Pick<MonitorRow, 'name' | 'description' | 'terms' | 'status' | 'severity' | 'updated_at'>>): Promise<void> {
    await db
      .updateTable('monitors')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Deletes a monitor; its alerts go with it (foreign key). */
  async deleteMonitor(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('monitors').where('id', '=', id).execute();
  }

  /** The number every change to monitors bumps (see migration 0013). */
  async generation(db: Kysely<DB>): Promise<number> {
    return Number((await db.selectFrom('monitor_generation').select('n').where('id', '=', 1).executeTakeFirstOrThrow()).n);
  }

  /** In the transaction of a change to monitors. */
  async bumpGeneration(db: Kysely<DB>): Promise<void> {
    await db.updateTable('monitor_generation').set((eb) => ({ n: eb('n', '+', 1) })).where('id', '=', 1).execute();
  }

  /** Every active monitor of every organization, for the matcher. */
  async activeMonitors(db: Kysely<DB>): Promise<ActiveMonitor[]> {
    const rows = await db.selectFrom('monitors').select(['id', 'organization_id', 'type', 'terms', 'severity']).where('status', '=', 'active').execute();
    return rows.map((r) => ({ ...r, terms: JSON.parse(r.terms) as string[] }));
  }

  /** Inserts alerts, skipping those already raised (same monitor, record and term); the ids of the new ones. */
  async insertAlerts(db: Kysely<DB>, rows: Array<Insertable<MonitorAlertsTable>>): Promise<string[]> {
    const inserted: string[] = [];
    for (let i = 0; i < rows.length; i += 500) {
      const r = await db
        .insertInto('monitor_alerts')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['monitor_id', 'leak_record_id', 'matched_term']).doNothing())
        .returning('id')
        .execute();
      const ids = r.map(({ id }) => id);
      // Their records' JSON in one statement of one shape: a subquery per inserted row made each
      // insert's text (and its compiled program) hundreds of kilobytes.
      if (ids.length > 0) await this.writeRecordJson(db).where('id', 'in', ids).execute();
      inserted.push(...ids);
    }
    return inserted;
  }

  /** Of these alerts, those whose record JSON the update above left null, with their records. */
  alertsWithoutRecordJson(db: Kysely<DB>, ids: string[]) {
    return db.selectFrom('monitor_alerts').select(['id', 'leak_record_id']).where('id', 'in', ids).where('record_json', 'is', null).execute();
  }

  /** PostgreSQL: of the alerts `ids`, those without record JSON take their record's from `texts` (by record id), in one statement. */
  async setRecordJsons(db: Kysely<DB>, ids: string[], texts: ReadonlyMap<string, string>): Promise<void> {
    if (texts.size === 0) return;
    await sql`update monitor_alerts set record_json = t.json from unnest(${[...texts.keys()]}::uuid[], ${[...texts.values()]}::text[]) as t(record_id, json)
      where monitor_alerts.leak_record_id = t.record_id and monitor_alerts.id = any(${ids}::uuid[]) and monitor_alerts.record_json is null`.execute(db);
  }

  /** An update that writes alerts' record JSON from their records (see migration 0020); the caller says which. */
  private writeRecordJson(db: Kysely<DB>) {
    return db.updateTable('monitor_alerts').set({ record_json: recordJsonOf(this.dialect) });
  }

  /** A monitor as a scan needs it, whatever its organization. */
  monitorById(db: Kysely<DB>, id: string) {
    return db.selectFrom('monitors').select(['id', 'organization_id', 'type', 'terms', 'severity']).where('id', '=', id).executeTakeFirst();
  }

  /** Alerts by id, as the API shows them (for their alert.created events). */
  alertsByIds(db: Kysely<DB>, ids: string[]): Promise<AlertRow[]> {
    return this.alerts(db).where('monitor_alerts.id', 'in', ids).execute() as Promise<AlertRow[]>;
  }

  /** The terms of the organization's active domain monitors (JSON arrays). */
  activeDomainTerms(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('monitors').select('terms').where('organization_id', '=', orgId).where('type', '=', 'domain').where('status', '=', 'active').execute();
  }

  /** The counts behind GET /monitoring/stats/: monitors by status, alerts by status and severity, alerts' days since `since`. */
  async statsRows(db: Kysely<DB>, orgId: string, since: string) {
    const monitors = await db.selectFrom('monitors').select(['status', (eb) => eb.fn.countAll().as('n')]).where('organization_id', '=', orgId).groupBy('status').execute();
    const alerts = await db
      .selectFrom('monitor_alerts')
      .select(['status', 'severity', (eb) => eb.fn.countAll().as('n')])
      .where('organization_id', '=', orgId)
      .groupBy(['status', 'severity'])
      .execute();
    const recent = await db.selectFrom('monitor_alerts').select('created_at').where('organization_id', '=', orgId).where('created_at', '>=', since).execute();
    return { monitors, alerts, recent };
  }

  async countMonitors(db: Kysely<DB>, orgId: string): Promise<number> {
    return Number((await db.selectFrom('monitors').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', orgId).executeTakeFirstOrThrow()).n);
  }

  /** The organization's open alerts (new and acknowledged), and those raised since `since`. */
  async alertFigures(db: Kysely<DB>, orgId: string, since: string): Promise<{ open: number; recent: number }> {
    const open = await this.countAlerts(db, orgId, { statuses: OPEN_STATUSES, severities: null });
    const recent = await db.selectFrom('monitor_alerts').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', orgId).where('created_at', '>=', since).executeTakeFirstOrThrow();
    return { open, recent: Number(recent.n) };
  }
}
