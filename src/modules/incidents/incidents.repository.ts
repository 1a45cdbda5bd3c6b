import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { jsonObjectText } from '../../db/json.js';
import { prepared } from '../../db/prepared.js';
import type { DB } from '../../db/schema.js';
import type { IncidentsTable, IocsTable } from './incidents.tables.js';

export type IncidentRow = Selectable<IncidentsTable>;
export type IocRow = Selectable<IocsTable>;

/**
 * An incident as the JSON text of IncidentSchema (as presentIncident shows it), written by the
 * database: a page of the list goes out without each row being made an object and serialised again.
 * test/modules/incidents.test.ts holds it to presentIncident, field by field and in order.
 */
export const INCIDENT_JSON: Record<Dialect, RawBuilder<string>> = {
  postgres: incidentJson('postgres'),
  sqlite: incidentJson('sqlite'),
};

function incidentJson(dialect: Dialect): RawBuilder<string> {
  return jsonObjectText(dialect, [
    { key: 'id', plain: 'incidents.id' },
    { key: 'title', text: 'incidents.title' },
    { key: 'description', text: 'incidents.description' },
    { key: 'status', plain: 'incidents.status' },
    { key: 'severity', plain: 'incidents.severity' },
    { key: 'tlp', plain: 'incidents.tlp' },
    { key: 'tags', raw: 'incidents.tags' },
    { key: 'assignee', plain: 'incidents.assignee_id' },
    { key: 'source_alert', plain: 'incidents.source_alert_id' },
    { key: 'ioc_count', raw: 'incidents.ioc_count' },
    { key: 'created_by', plain: 'incidents.created_by' },
    { key: 'created_at', time: 'incidents.created_at' },
    { key: 'updated_at', time: 'incidents.updated_at' },
    { key: 'resolved_at', time: 'incidents.resolved_at' },
    { key: 'closed_at', time: 'incidents.closed_at' },
  ]);
}

/** The only place with Kysely queries for incidents, IOCs, events and comments; every one scoped to an organization. */
export class IncidentsRepository {
  constructor(private readonly dialect: Dialect) {}

  selectIncidents(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('incidents').selectAll().where('organization_id', '=', orgId);
  }

  /** The organization's incidents, each as its JSON text (INCIDENT_JSON), in `json`. */
  selectIncidentJson(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('incidents').select(INCIDENT_JSON[this.dialect].as('json')).where('organization_id', '=', orgId);
  }

  private readonly incidentById = prepared((db: Kysely<DB>, orgId: string, id: string) => this.selectIncidents(db, orgId).where('id', '=', id));

  async findIncident(db: Kysely<DB>, orgId: string, id: string): Promise<IncidentRow | undefined> {
    return (await this.incidentById(db, orgId, id))[0];
  }

  async insertIncident(db: Kysely<DB>, row: Omit<IncidentRow, 'version' | 'ioc_count'>) {
    await db.insertInto('incidents').values(row).execute();
    await this.count(db, row.organization_id, row.status, row.severity, 1);
  }

  /** Moves an incident between (status, severity) counters; call with the same transaction as the change. */
  async count(db: Kysely<DB>, orgId: string, status: string, severity: string, delta: number) {
    await db
      .insertInto('incident_counters')
      .values({ organization_id: orgId, status, severity, n: delta })
      .onConflict((oc) => oc.columns(['organization_id', 'status', 'severity']).doUpdateSet((eb) => ({ n: eb('incident_counters.n', '+', eb.ref('excluded.n')) })))
      .execute();
  }

  /** Incidents matching status/severity lists, from the counters (no scan). */
  async countByStatusSeverity(db: Kysely<DB>, orgId: string, statuses: string[] | null, severities: string[] | null): Promise<number> {
    return Number((await this.countQuery(db, orgId, statuses, severities).executeTakeFirst())?.n ?? 0);
  }

  /** countByStatusSeverity as a query of one row (`n`: null when nothing is counted), to read with a page (see Listing.page). */
  countQuery(db: Kysely<DB>, orgId: string, statuses: string[] | null, severities: string[] | null) {
    let q = db.selectFrom('incident_counters').select((eb) => eb.fn.sum<number | string>('n').as('n')).where('organization_id', '=', orgId);
    if (statuses) q = q.where('status', 'in', statuses);
    if (severities) q = q.where('severity', 'in', severities);
    return q;
  }

  /** Every change bumps the version (the ETag). */
  updateIncident(db: Kysely<DB>, id: string, changes: Partial<Omit<IncidentRow, 'id' | 'organization_id' | 'version'>>) {
    return db
      .updateTable('incidents')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  adjustIocCount(db: Kysely<DB>, id: string, delta: number, at: string) {
    return db
      .updateTable('incidents')
      .set((eb) => ({ ioc_count: eb('ioc_count', '+', delta), version: eb('version', '+', 1), updated_at: at }))
      .where('id', '=', id)
      .execute();
  }

  async deleteIncident(db: Kysely<DB>, row: IncidentRow) {
    await db.deleteFrom('incidents').where('id', '=', row.id).execute();
    await this.count(db, row.organization_id, row.status, row.severity, -1);
  }

  selectIocs(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('iocs').selectAll().where('organization_id', '=', orgId);
  }

  findIoc(db: Kysely<DB>, orgId: string, incidentId: string, id: string): Promise<IocRow | undefined> {
    return this.selectIocs(db, orgId).where('incident_id', '=', incidentId).where('id', '=', id).executeTakeFirst();
  }

  /** The `type:value` keys among `candidates` that the incident already has. */
  async existingIocKeys(db: Kysely<DB>, incidentId: string, candidates: Array<{ type: string; value: string }>): Promise<Set<string>> {
    const keys = new Set<string>();
    const values = [...new Set(candidates.map((c) => c.value))];
    for (let i = 0; i < values.length; i += 500) {
      const rows = await db
        .selectFrom('iocs')
        .select(['type', 'value'])
        .where('incident_id', '=', incidentId)
        .where('value', 'in', values.slice(i, i + 500))
        .execute();
      for (const r of rows) keys.add(`${r.type}:${r.value}`);
    }
    return keys;
  }

  async insertIocs(db: Kysely<DB>, rows: Array<Omit<IocRow, 'version'>>) {
    // Chunked: SQLite caps bound parameters per statement.
    for (let i = 0; i < rows.length; i += 50) await db.insertInto('iocs').values(rows.slice(i, i + 50)).execute();
  }

  updateIoc(db: Kysely<DB>, id: string, changes: Partial<Omit<IocRow, 'id' | 'version'>>) {
    return db
      .updateTable('iocs')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  deleteIoc(db: Kysely<DB>, id: string) {
    return db.deleteFrom('iocs').where('id', '=', id).execute();
  }

  allIocs(db: Kysely<DB>, orgId: string, incidentId: string): Promise<IocRow[]> {
    return this.selectIocs(db, orgId).where('incident_id', '=', incidentId).orderBy('created_at').orderBy('id').execute();
  }

  async insertEvents(
    db: Kysely<DB>,
    events: Array<{ id: string; organization_id: string; incident_id: string; kind: string; actor_id: string | null; changes: object; ioc_id: string | null; created_at: string }>,
  ) {
    const rows = events.map((e) => ({ ...e, changes: JSON.stringify(e.changes) }));
    for (let i = 0; i < rows.length; i += 50) await db.insertInto('incident_events').values(rows.slice(i, i + 50)).execute();
  }

  selectEvents(db: Kysely<DB>, orgId: string, incidentId: string) {
    return db.selectFrom('incident_events').selectAll().where('organization_id', '=', orgId).where('incident_id', '=', incidentId);
  }

  insertComment(db: Kysely<DB>, row: { id: string; organization_id: string; incident_id: string; author_id: string | null; body: string; created_at: string }) {
    return db.insertInto('incident_comments').values(row).execute();
  }

  selectComments(db: Kysely<DB>, orgId: string, incidentId: string) {
    return db.selectFrom('incident_comments').selectAll().where('organization_id', '=', orgId).where('incident_id', '=', incidentId);
  }

  /** IOCs across the organization with their incident, for correlation. */
  selectCorrelated(db: Kysely<DB>, orgId: string) {
    return db
      .selectFrom('iocs')
      .innerJoin('incidents', 'incidents.id', 'iocs.incident_id')
      .selectAll('iocs')
      .select(['incidents.title as incident_title', 'incidents.status as incident_status'])
      .where('iocs.organization_id', '=', orgId);
  }

  userInOrg(db: Kysely<DB>, orgId: string, userId: string) {
    return db.selectFrom('users').select('id').where('id', '=', userId).where('organization_id', '=', orgId).executeTakeFirst().then(Boolean);
  }

  async stats(db: Kysely<DB>, orgId: string) {
    const grouped = await db.selectFrom('incident_counters').select(['status', 'severity', 'n']).where('organization_id', '=', orgId).execute();
    const seconds =
      this.dialect === 'postgres'
        ? sql<number>`avg(extract(epoch from (resolved_at - created_at)))`
        : sql<number>`avg((julianday(resolved_at) - julianday(created_at)) * 86400.0)`;
    const mttr = await db
      .selectFrom('incidents')
      .select(seconds.as('s'))
      .where('organization_id', '=', orgId)
      .where('resolved_at', 'is not', null)
      .executeTakeFirst();
    return { grouped: grouped.map((g) => ({ status: g.status, severity: g.severity, n: Number(g.n) })), mttr: mttr?.s === null || mttr?.s === undefined ? null : Number(mttr.s) };
  }

  countOpen(db: Kysely<DB>, orgId: string) {
    return this.countByStatusSeverity(db, orgId, ['open', 'investigating', 'contained'], null);
  }
}
