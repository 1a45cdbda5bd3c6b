import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { type MonitorType, normaliseTerms } from '../../domain/monitor-terms.js';
import { conflict, notFound, validation } from '../../http/errors.js';
import { filterValues, type ListParams, type ListResult, onlyParams } from '../../db/listing.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import type { IncidentsService, Severity } from '../incidents/index.js';
import type { Outbox } from '../events/index.js';
import { batchRecordTexts } from '../leaks/index.js';
import { alertSeverity, type Match, MonitorIndex } from './monitoring.matcher.js';
import { type AlertRow, FOLD_KEYS, type MonitoringRepository, type MonitorWithFigures } from './monitoring.repository.js';
import { MonitorScans, type ScanOptions } from './monitoring.scans.js';
import { alertListing, monitorListing } from './monitoring.lists.js';
import { ScansRepository } from './monitoring.scans.repository.js';
import { ALERT_STATUSES, type AlertPatch, MONITOR_STATUSES, type AlertOut, type MonitorCreate, type MonitorOut, type MonitorPatch, SEVERITIES } from './monitoring.schemas.js';
import { presentAlert, presentMonitor } from './monitoring.presenters.js';
import type { AppHookRegistry, IngestedRecords } from '../hooks.js';
import { markRecords } from '../indicator-marks.js';

type Ctx = { p: Principal; ip: string };

/** The alert list's parameters that its counts can answer (see listAlerts). */
const COUNTED_ALERT_PARAMS = new Set(['monitor', 'status', 'severity', 'page', 'page_size', 'ordering']);

/** Terms normalised for the monitor's type, or a 400 naming each bad one (terms.<index>). */
function termsFor(type: MonitorType, terms: string[]): string[] {
  const r = normaliseTerms(type, terms);
  if (!r.ok) throw validation(r.errors);
  return r.terms;
}

/** Monitors: what an organization watches the leak corpus for. */
export class MonitoringService {
  /** The matcher's index and the monitors' generation it was built at. */
  private index?: { generation: number; monitors: MonitorIndex };
  /** Scans of the corpus (backfills and re-scans), and their runner. */
  readonly scans: MonitorScans;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId'>,
    private readonly repo: MonitoringRepository,
    private readonly audit: AuditLog,
    private readonly incidents: IncidentsService,
    private readonly outbox: Outbox,
    scanOptions: ScanOptions = {},
    /** Where the indicators that name an alert's record are asked (indicator-marks.ts). */
    private readonly hooks?: AppHookRegistry,
  ) {
    this.scans = new MonitorScans(deps, new ScansRepository(), repo, outbox, (trx, matches) => this.writeAlerts(trx, matches), scanOptions);
  }

  private get db() {
    return this.deps.database.db;
  }

  list(p: Principal, params: ListParams): Promise<ListResult<MonitorOut>> {
    const qb = monitorListing.filter(this.repo.selectMonitors(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return monitorListing.page(qb, params, presentMonitor);
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<MonitorWithFigures> {
    const row = await this.repo.findMonitor(db, p.organization.id, id);
    if (!row) throw notFound('No such monitor.');
    return row;
  }

  async create(ctx: Ctx, body: MonitorCreate): Promise<MonitorWithFigures> {
    const terms = termsFor(body.type, body.terms);
    const created = await this.db.transaction().execute(async (trx) => {
      const at = this.deps.clock().toISOString();
      const row = {
        id: this.deps.newId(),
        organization_id: ctx.p.organization.id,
        name: body.name,
        description: body.description ?? '',
        type: body.type,
        terms: JSON.stringify(terms),
        status: body.status ?? 'active',
        severity: body.severity ?? null,
        created_by: ctx.p.user.id,
        created_at: at,
        updated_at: at,
        last_scan_at: null,
      };
      await this.repo.insertMonitor(trx, row);
      await this.repo.bumpGeneration(trx);
      await this.audit.recordAs(trx, ctx, { action: 'monitor.created', targetType: 'monitor', targetId: row.id, changes: { name: row.name, type: row.type, terms } });
      if (body.backfill !== false && row.status === 'active') await this.scans.request(trx, row, 'created');
      return this.get(ctx.p, row.id, trx);
    });
    this.scans.wake();
    return created;
  }

  /** POST /monitoring/<id>/scan/: queues a scan of the corpus for the monitor (or answers the one already queued). */
  async requestScan(ctx: Ctx, id: string): Promise<{ scan_id: string; status: 'queued' }> {
    const scan = await this.db.transaction().execute(async (trx) => {
      const monitor = await this.get(ctx.p, id, trx);
      const row = await this.scans.request(trx, monitor, 'requested');
      await this.audit.recordAs(trx, ctx, { action: 'monitor.scan_requested', targetType: 'monitor', targetId: id, changes: { scan: row.id } });
      return row;
    });
    this.scans.wake();
    return { scan_id: scan.id, status: 'queued' };
  }

  async update(ctx: Ctx, id: string, patch: MonitorPatch, assertVersion: (v: number) => void): Promise<MonitorWithFigures> {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      assertVersion(current.version);
      const next = { ...patch, ...(patch.terms !== undefined && { terms: termsFor(current.type as MonitorType, patch.terms) }) };
      const changes = diff(presentMonitor(current), next);
      if (Object.keys(changes).length === 0) return current;
      await this.repo.updateMonitor(trx, id, {
        ...(next.name !== undefined && { name: next.name }),
        ...(next.description !== undefined && { description: next.description }),
        ...(next.terms !== undefined && { terms: JSON.stringify(next.terms) }),
        ...(next.status !== undefined && { status: next.status }),
        ...(next.severity !== undefined && { severity: next.severity }),
        updated_at: this.deps.clock().toISOString(),
      });
      await this.repo.bumpGeneration(trx);
      await this.audit.recordAs(trx, ctx, { action: 'monitor.updated', targetType: 'monitor', targetId: id, changes });
      return this.get(ctx.p, id, trx);
    });
  }

  async remove(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      await this.repo.deleteMonitor(trx, id);
      await this.repo.bumpGeneration(trx);
      await this.audit.recordAs(trx, ctx, { action: 'monitor.deleted', targetType: 'monitor', targetId: id, changes: { name: current.name, alert_count: Number(current.alert_count) } });
    });
  }

  /**
   * The leaks.ingested hook: the records of an ingest batch matched against every active monitor,
   * their alerts written in the batch's transaction (a record and its alerts commit together), each
   * (monitor, record, term) once. The index is rebuilt when the monitors' generation, read in the
   * same transaction, has moved: no batch matches against monitors as they were.
   */
  async raiseAlerts(trx: Kysely<DB>, records: IngestedRecords): Promise<{ alerts: number; exposures: number }> {
    if (records.count === 0) return { alerts: 0, exposures: 0 };
    const generation = await this.repo.generation(trx);
    if (!this.index || this.index.generation !== generation) this.index = { generation, monitors: new MonitorIndex(await this.repo.activeMonitors(trx)) };
    if (this.index.monitors.size === 0) return { alerts: 0, exposures: 0 };
    return { alerts: await this.writeAlerts(trx, this.index.monitors.match(await records.load())), exposures: 0 };
  }

  /** The leaks.sourceRenamed hook: the alerts of the source's records show its new name. */
  async sourceRenamed(trx: Kysely<DB>, sourceId: string): Promise<void> {
    await this.repo.rewriteRecordJson(trx, sourceId);
  }

  /**
   * Writes the alerts of `matches` in the caller's transaction, skipping those raised already (same
   * monitor, record and term), with an alert.created event for each new one; how many were new.
   */
  async writeAlerts(trx: Kysely<DB>, matches: Match[]): Promise<number> {
    if (matches.length === 0) return 0;
    const at = this.deps.clock().toISOString();
    const ids = await this.repo.insertAlerts(
      trx,
      matches.map((m) => ({
        id: this.deps.newId(),
        organization_id: m.monitor.organization_id,
        monitor_id: m.monitor.id,
        leak_record_id: m.record.id,
        matched_term: m.term,
        matched_field: m.field,
        severity: alertSeverity(m),
        status: 'new',
        note: '',
        incident_id: null,
        created_at: at,
        updated_at: at,
      })),
    );
    if (ids.length === 0) return 0;
    const shards = this.deps.database.corpusShards;
    if (shards) {
      // Records of the ingest batch being written are not committed on their shards yet: the
      // main database's foreign scan of them (insertAlerts) finds none, the batch's own transaction does.
      const missing = await this.repo.alertsWithoutRecordJson(trx, ids);
      if (missing.length) await this.repo.setRecordJsons(trx, ids, await batchRecordTexts(shards, trx, [...new Set(missing.map((m) => m.leak_record_id))]));
    }
    const rows = await this.repo.alertsByIds(trx, ids);
    await this.outbox.record(
      trx,
      rows.map((r) => ({ organizationId: r.organization_id, type: 'alert.created' as const, data: presentAlert(r) })),
    );
    return ids.length;
  }

  /** Records an alert.updated event for each of these alerts as they now are, in the change's transaction. */
  private async recordUpdated(trx: Kysely<DB>, ids: string[]): Promise<AlertRow[]> {
    const rows: AlertRow[] = [];
    for (let i = 0; i < ids.length; i += 500) rows.push(...(await this.repo.alertsByIds(trx, ids.slice(i, i + 500))));
    await this.outbox.record(
      trx,
      rows.map((r) => ({ organizationId: r.organization_id, type: 'alert.updated' as const, data: presentAlert(r) })),
    );
    return rows;
  }

  /** The domains the organization watches with active domain monitors, sorted (a watched domain covers its subdomains). */
  async watchedDomains(orgId: string): Promise<string[]> {
    const rows = await this.repo.activeDomainTerms(this.db, orgId);
    return [...new Set(rows.flatMap((r) => JSON.parse(r.terms) as string[]))].sort();
  }

  // --- alerts ---

  /**
   * Folds the alert counts' delta rows into one per key (see foldAlertCounts in the repository),
   * batch after batch until none is left or `stopping()` says so: the background job's turn, and
   * the end of a command-line import, which may have appended one row per alert.
   */
  async foldAlertCounts(stopping: () => boolean = () => false): Promise<void> {
    while ((await this.repo.foldAlertCounts(this.db)) === FOLD_KEYS && !stopping());
  }

  /** The organization's alerts, or one monitor's (404 when that monitor is not the organization's). */
  async listAlerts(p: Principal, params: ListParams, monitorId?: string): Promise<ListResult<string>> {
    const org = p.organization.id;
    let qb = this.repo.selectAlertJson(this.db, org);
    if (monitorId) {
      await this.get(p, monitorId);
      qb = qb.where('monitor_alerts.monitor_id', '=', monitorId);
    }
    const ctx = { dialect: this.deps.database.dialect };
    const filtered = alertListing.filter(qb, params, ctx);
    // A triage queue's filters (monitor, status, severity) are counted from the alert counts;
    // others from the alerts' own index: every alert has its monitor and record (foreign keys), so
    // the joins that fill the page's rows would change nothing but the count's cost.
    const count = onlyParams(params, COUNTED_ALERT_PARAMS)
      ? this.repo.alertCountQuery(this.db, org, { monitorId: monitorId ?? (params.filters.monitor as string | undefined), statuses: filterValues(params, 'status'), severities: filterValues(params, 'severity') })
      : async () => {
          let counted = this.repo.alertsOnly(this.db, org);
          if (monitorId) counted = counted.where('monitor_alerts.monitor_id', '=', monitorId);
          return Number((await alertListing.filter(counted, params, ctx).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
        };
    const page = await alertListing.page(filtered, params, (r: { json: string }) => r.json, count);
    return this.hooks ? { ...page, results: await markRecords(this.hooks, this.db, org, page.results, 'leak_record') } : page;
  }

  /** An alert as the API shows it, its record marked with the indicators naming it (indicator-marks.ts). */
  async presentMarked(p: Principal, row: AlertRow): Promise<AlertOut> {
    const alert = presentAlert(row);
    if (!this.hooks) return alert;
    return JSON.parse((await markRecords(this.hooks, this.db, p.organization.id, [JSON.stringify(alert)], 'leak_record'))[0]!) as AlertOut;
  }

  async getAlert(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<AlertRow> {
    const row = await this.repo.findAlert(db, p.organization.id, id);
    if (!row) throw notFound('No such alert.');
    return row;
  }

  async updateAlert(ctx: Ctx, id: string, patch: AlertPatch, assertVersion: (v: number) => void): Promise<AlertRow> {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.getAlert(ctx.p, id, trx);
      assertVersion(current.version);
      const changes = diff({ status: current.status, note: current.note } as Record<string, unknown>, patch);
      if (Object.keys(changes).length === 0) return current;
      await this.repo.updateAlerts(trx, ctx.p.organization.id, [id], { ...patch, updated_at: this.deps.clock().toISOString() });
      await this.audit.recordAs(trx, ctx, { action: 'alert.updated', targetType: 'alert', targetId: id, changes });
      const [updated] = await this.recordUpdated(trx, [id]);
      return updated!;
    });
  }

  /** Triage of many alerts at once: those of the organization change, the others are named not found. */
  async triage(ctx: Ctx, body: { ids: string[]; status: string; note?: string }): Promise<{ updated: number; not_found: string[] }> {
    const ids = [...new Set(body.ids.map((i) => i.toLowerCase()))];
    return this.db.transaction().execute(async (trx) => {
      const set = { status: body.status, ...(body.note !== undefined && { note: body.note }), updated_at: this.deps.clock().toISOString() };
      const updated = await this.repo.updateAlerts(trx, ctx.p.organization.id, ids, set);
      if (updated.length) {
        await this.recordUpdated(trx, updated);
        await this.audit.recordAs(trx, ctx, { action: 'alerts.triaged', targetType: 'alert', targetId: null, changes: { ids: updated, status: body.status, ...(body.note !== undefined && { note: body.note }) } });
      }
      const found = new Set(updated);
      return { updated: updated.length, not_found: ids.filter((i) => !found.has(i)) };
    });
  }

  /** GET /monitoring/stats/: 30 days of alerts_by_day, days without alerts included. */
  async stats(p: Principal) {
    const today = this.deps.clock().toISOString().slice(0, 10);
    const days = Array.from({ length: 30 }, (_, i) => new Date(Date.parse(`${today}T00:00:00Z`) - (29 - i) * 86_400_000).toISOString().slice(0, 10));
    const { monitors, alerts, recent } = await this.repo.statsRows(this.db, p.organization.id, `${days[0]}T00:00:00.000Z`);
    const zeros = (keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<string, number>;
    const byMonitorStatus = zeros(MONITOR_STATUSES);
    for (const r of monitors) byMonitorStatus[r.status] = Number(r.n);
    const byStatus = zeros(ALERT_STATUSES);
    const bySeverity = zeros(SEVERITIES);
    for (const r of alerts) {
      byStatus[r.status] = (byStatus[r.status] ?? 0) + Number(r.n);
      bySeverity[r.severity] = (bySeverity[r.severity] ?? 0) + Number(r.n);
    }
    const perDay = new Map(days.map((d) => [d, 0]));
    for (const r of recent) {
      const day = r.created_at.slice(0, 10);
      if (perDay.has(day)) perDay.set(day, (perDay.get(day) as number) + 1);
    }
    return {
      monitors: byMonitorStatus,
      alerts: { by_status: byStatus, by_severity: bySeverity },
      alerts_by_day: [...perDay].map(([date, count]) => ({ date, count })),
    };
  }

  /**
   * Escalates an alert, in one transaction: to a new incident (title `<monitor>: <term> in <source>`,
   * the alert's severity, `source_alert` set, IOCs for the record's e-mail, domain and ip), or merged
   * into `incidentId` (its IOCs added, duplicates skipped). The alert becomes acknowledged and names
   * the incident; a second escalation is 409.
   */
  async escalate(ctx: Ctx, alertId: string, incidentId?: string): Promise<{ incident: Awaited<ReturnType<IncidentsService['get']>>; created: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      const alert = await this.getAlert(ctx.p, alertId, trx);
      if (alert.incident_id) throw conflict(`This alert was escalated already, to incident ${alert.incident_id}.`);
      const record = JSON.parse(alert.record_json) as { email: string | null; domain: string | null; ip: string | null; source: { name: string } };
      const iocs = [
        ...(record.email ? [{ type: 'email' as const, value: record.email }] : []),
        ...(record.domain ? [{ type: 'domain' as const, value: record.domain }] : []),
        ...(record.ip ? [{ type: record.ip.includes(':') ? ('ipv6' as const) : ('ipv4' as const), value: record.ip }] : []),
      ];
      let incident;
      if (incidentId) {
        ({ incident } = await this.incidents.mergeAlert(trx, ctx, incidentId, alert, iocs));
      } else {
        const title = `${alert.monitor_name}: ${alert.matched_term} in ${record.source.name}`.slice(0, 200);
        incident = await this.incidents.create(ctx, { title, severity: alert.severity as Severity, iocs }, { trx, sourceAlertId: alert.id });
      }
      await this.repo.updateAlerts(trx, ctx.p.organization.id, [alert.id], { status: 'acknowledged', incident_id: incident.id, updated_at: this.deps.clock().toISOString() });
      await this.recordUpdated(trx, [alert.id]);
      await this.audit.recordAs(trx, ctx, {
        action: 'alert.escalated',
        targetType: 'alert',
        targetId: alert.id,
        changes: { incident: incident.id, merged: Boolean(incidentId), status: { from: alert.status, to: 'acknowledged' } },
      });
      return { incident, created: !incidentId };
    });
  }

  countMonitors(db: Kysely<DB>, orgId: string): Promise<number> {
    return this.repo.countMonitors(db, orgId);
  }

  /** The organization's monitoring figures of GET /leaks/stats/. */
  async organizationFigures(db: Kysely<DB>, orgId: string) {
    const since = new Date(this.deps.clock().getTime() - 30 * 86_400_000).toISOString();
    const [monitors, alerts] = await Promise.all([this.repo.countMonitors(db, orgId), this.repo.alertFigures(db, orgId, since)]);
    return { monitors, alerts_open: alerts.open, alerts_last_30_days: alerts.recent };
  }
}
