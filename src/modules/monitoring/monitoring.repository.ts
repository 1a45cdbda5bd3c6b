import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { RECORD_JSON } from '../leaks/index.js';
import type { DB, MonitorAlertsTable, MonitorsTable } from '../../db/schema.js';
import type { ActiveMonitor } from './monitoring.matcher.js';

export type MonitorRow = Selectable<MonitorsTable>;
/** A monitor with its alert figures, counted from its alerts. */
export type MonitorWithFigures = MonitorRow & { alert_count: number | string; alerts_open: number | string; last_match_at: string | null };

export type AlertRow = Selectable<MonitorAlertsTable> & { monitor_name: string; record_json: string };

/** Every query of the monitoring module. */
export class MonitoringRepository {
  constructor(private readonly dialect: Dialect) {}

  /** Alerts, each with its monitor's name and its leak record as JSON text. */
  private alerts(db: Kysely<DB>) {
    return db
      .selectFrom('monitor_alerts')
      .innerJoin('monitors', 'monitors.id', 'monitor_alerts.monitor_id')
      .innerJoin('leak_records', 'leak_records.id', 'monitor_alerts.leak_record_id')
      .innerJoin('leak_sources', 'leak_sources.id', 'leak_records.source_id')
      .selectAll('monitor_alerts')
      .select(['monitors.name as monitor_name', RECORD_JSON[this.dialect].as('record_json')]);
  }

  /** The organization's alerts, without their monitors and records (to count them). */
  alertsOnly(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('monitor_alerts').where('monitor_alerts.organization_id', '=', orgId);
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
        eb.selectFrom('monitor_alerts').select((e) => e.fn.countAll().as('n')).whereRef('monitor_alerts.monitor_id', '=', 'monitors.id').as('alert_count'),
        eb
          .selectFrom('monitor_alerts')
          .select((e) => e.fn.countAll().as('n'))
          .whereRef('monitor_alerts.monitor_id', '=', 'monitors.id')
          .where('monitor_alerts.status', 'in', ['new', 'acknowledged'])
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
      for (const { id } of r) inserted.push(id);
    }
    return inserted;
  }

  /** A monitor as a scan needs it, whatever its organization. */
  monitorById(db: Kysely<DB>, id: string) {
    return db.selectFrom('monitors').select(['id', 'organization_id', 'type', 'terms', 'severity']).where('id', '=', id).executeTakeFirst();
  }

  /** Alerts by id, as the API shows them (for their alert.created events). */
  alertsByIds(db: Kysely<DB>, ids: string[]): Promise<AlertRow[]> {
    return this.alerts(db).where('monitor_alerts.id', 'in', ids).execute() as Promise<AlertRow[]>;
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
    const open = await db.selectFrom('monitor_alerts').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', orgId).where('status', 'in', ['new', 'acknowledged']).executeTakeFirstOrThrow();
    const recent = await db.selectFrom('monitor_alerts').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', orgId).where('created_at', '>=', since).executeTakeFirstOrThrow();
    return { open: Number(open.n), recent: Number(recent.n) };
  }
}
