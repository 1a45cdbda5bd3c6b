import type { Kysely } from 'kysely';
import { Compile } from 'typebox/compile';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { normaliseIoc } from '../../domain/ioc.js';
import { type Principal, requireRole } from '../identity/index.js';
import { fieldErrors } from '../../http/conventions.js';
import { AppError, conflict, type FieldError, notFound, validation } from '../../http/errors.js';
import { filterValues, type ListParams, type ListResult, onlyParams } from '../../db/listing.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Outbox } from '../events/index.js';
import type { IncidentRow, IncidentsRepository, IocRow } from './incidents.repository.js';
import { commentListing, correlationListing, eventListing, incidentListing, iocListing } from './incidents.lists.js';
import { presentComment, presentIncident, presentIoc } from './incidents.presenters.js';
import {
  type IocInput,
  IocInputSchema,
  SEVERITIES,
  SEVERITY_RANK,
  type Severity,
  STATUSES,
  type Status,
  type Tlp,
} from './incidents.schemas.js';

/** Allowed status changes; a PATCH to the current status is a no-op. */
export const TRANSITIONS: Record<Status, Status[]> = {
  open: ['investigating', 'resolved', 'closed'],
  investigating: ['contained', 'resolved', 'closed'],
  contained: ['resolved', 'closed'],
  resolved: ['closed', 'open'],
  closed: ['open'],
};

const MAX_BULK_IOCS = 1000;
/** List parameters the status/severity counters can count for. */
const COUNTED_PARAMS = new Set(['status', 'severity', 'page', 'page_size', 'ordering']);
const checkIocInput = Compile(IocInputSchema);

interface Ctx {
  p: Principal;
  ip: string;
}

export class IncidentsService {
  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId'>,
    private readonly repo: IncidentsRepository,
    private readonly audit: AuditLog,
    private readonly outbox: Outbox,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  /** A page of incidents, each as its JSON text (see INCIDENT_JSON). */
  async list(p: Principal, params: ListParams): Promise<ListResult<string>> {
    const qb = incidentListing.filter(this.repo.selectIncidentJson(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    // With no filter but status/severity, the count comes from the counters instead of a scan.
    const onlyCounted = onlyParams(params, COUNTED_PARAMS);
    const count = onlyCounted ? this.repo.countQuery(this.db, p.organization.id, filterValues(params, 'status'), filterValues(params, 'severity')) : undefined;
    return incidentListing.page(qb, params, (r: { json: string }) => r.json, count);
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<IncidentRow> {
    const row = await this.repo.findIncident(db, p.organization.id, id);
    if (!row) throw notFound('No such incident.');
    return row;
  }

  private async assertAssignee(db: Kysely<DB>, p: Principal, assignee: string | null | undefined) {
    if (assignee && !(await this.repo.userInOrg(db, p.organization.id, assignee.toLowerCase()))) {
      throw validation([{ field: 'assignee', message: 'must be a user of your organization' }]);
    }
  }

  /** Validates and normalises IOC inputs; an item's errors are named by field. */
  private normaliseIocs(items: unknown[], fieldPrefix: (i: number) => string) {
    const good: Array<{ index: number; input: IocInput; value: string }> = [];
    const rejected: Array<{ index: number; errors: FieldError[] }> = [];
    items.forEach((item, index) => {
      if (!checkIocInput.Check(item)) {
        const errors = typeboxErrors([...checkIocInput.Errors(item)]).map((e) => ({ ...e, field: `${fieldPrefix(index)}${e.field}` }));
        rejected.push({ index, errors });
        return;
      }
      const input = item as IocInput;
      const n = normaliseIoc(input.type, input.value);
      if (!n.ok) {
        rejected.push({ index, errors: [{ field: `${fieldPrefix(index)}value`, message: n.error }] });
        return;
      }
      const expiry = expiryError(input.expires_at, input.first_seen ?? this.now());
      if (expiry) {
        rejected.push({ index, errors: [{ field: `${fieldPrefix(index)}expires_at`, message: expiry }] });
        return;
      }
      good.push({ index, input, value: n.value });
    });
    return { good, rejected };
  }

  private iocRow(p: Principal, incident: IncidentRow, input: IocInput, value: string, at: string): Omit<IocRow, 'version'> {
    return {
      id: this.deps.newId(),
      organization_id: p.organization.id,
      incident_id: incident.id,
      type: input.type,
      value,
      description: input.description ?? '',
      tlp: input.tlp ?? incident.tlp,
      tags: JSON.stringify(input.tags ?? []),
      first_seen: isoOrNull(input.first_seen),
      last_seen: isoOrNull(input.last_seen),
      expires_at: isoOrNull(input.expires_at),
      created_by: p.user.id,
      created_at: at,
      updated_at: at,
    };
  }

  /** Inserts new IOCs (skipping ones the incident has) with their events and audit entries; returns what was created. */
  private async addIocs(trx: Kysely<DB>, ctx: Ctx, incident: IncidentRow, items: Array<{ input: IocInput; value: string }>) {
    const at = this.now();
    const existing = await this.repo.existingIocKeys(trx, incident.id, items.map((i) => ({ type: i.input.type, value: i.value })));
    const rows: Array<Omit<IocRow, 'version'>> = [];
    let duplicates = 0;
    for (const item of items) {
      const key = `${item.input.type}:${item.value}`;
      if (existing.has(key)) {
        duplicates++;
        continue;
      }
      existing.add(key);
      rows.push(this.iocRow(ctx.p, incident, item.input, item.value, at));
    }
    if (rows.length) {
      await this.repo.insertIocs(trx, rows);
      await this.repo.insertEvents(
        trx,
        rows.map((r) => ({
          id: this.deps.newId(),
          organization_id: ctx.p.organization.id,
          incident_id: incident.id,
          kind: 'ioc_added',
          actor_id: ctx.p.user.id,
          changes: { type: r.type, value: r.value },
          ioc_id: r.id,
          created_at: at,
        })),
      );
      await this.repo.adjustIocCount(trx, incident.id, rows.length, at);
      await this.audit.recordAs(trx, ctx, { action: 'ioc.created', targetType: 'incident', targetId: incident.id, changes: { count: rows.length, iocs: rows.slice(0, 100).map((r) => ({ id: r.id, type: r.type, value: r.value })) },
      });
      // One ioc.created event per IOC, bulk or not.
      await this.outbox.record(
        trx,
        rows.map((r) => ({ organizationId: incident.organization_id, type: 'ioc.created' as const, data: presentIoc({ ...r, version: 1 } as IocRow) })),
      );
    }
    return { rows, duplicates };
  }

  /**
   * `within`: run in the caller's transaction (monitoring escalating an alert: the incident and the
   * alert's change commit together) and record the alert it comes from.
   */
  async create(
    ctx: Ctx,
    body: { title: string; description?: string; status?: Status; severity?: Severity; tlp?: Tlp; tags?: string[]; assignee?: string | null; iocs?: IocInput[] },
    within?: { trx: Kysely<DB>; sourceAlertId: string },
  ) {
    const { p } = ctx;
    const { good, rejected } = this.normaliseIocs(body.iocs ?? [], (i) => `iocs.${i}.`);
    if (rejected.length) throw validation(rejected.flatMap((r) => r.errors));
    const run = <T>(fn: (trx: Kysely<DB>) => Promise<T>) => (within ? fn(within.trx) : this.db.transaction().execute(fn));
    return run(async (trx) => {
      await this.assertAssignee(trx, p, body.assignee);
      const at = this.now();
      const status = body.status ?? 'open';
      const severity = body.severity ?? 'medium';
      const row: Omit<IncidentRow, 'version' | 'ioc_count'> = {
        id: this.deps.newId(),
        organization_id: p.organization.id,
        title: body.title,
        description: body.description ?? '',
        status,
        severity,
        severity_rank: SEVERITY_RANK[severity],
        tlp: body.tlp ?? 'amber',
        tags: JSON.stringify(body.tags ?? []),
        assignee_id: body.assignee?.toLowerCase() ?? null,
        source_alert_id: within?.sourceAlertId ?? null,
        created_by: p.user.id,
        created_at: at,
        updated_at: at,
        resolved_at: status === 'resolved' || status === 'closed' ? at : null,
        closed_at: status === 'closed' ? at : null,
      };
      await this.repo.insertIncident(trx, row);
      const created = { title: row.title, status, severity, tlp: row.tlp, tags: body.tags ?? [], assignee: row.assignee_id };
      await this.repo.insertEvents(trx, [
        { id: this.deps.newId(), organization_id: p.organization.id, incident_id: row.id, kind: 'created', actor_id: p.user.id, changes: created, ioc_id: null, created_at: at },
      ]);
      await this.audit.recordAs(trx, ctx, { action: 'incident.created', targetType: 'incident', targetId: row.id, changes: created });
      const incident = await this.get(p, row.id, trx);
      if (good.length) await this.addIocs(trx, ctx, incident, good);
      const made = await this.get(p, row.id, trx);
      await this.outbox.record(trx, [{ organizationId: p.organization.id, type: 'incident.created', data: presentIncident(made) }]);
      return made;
    });
  }

  async update(
    ctx: Ctx,
    id: string,
    patch: { title?: string; description?: string; status?: Status; severity?: Severity; tlp?: Tlp; tags?: string[]; assignee?: string | null },
    assertVersion: (v: number) => void,
  ) {
    const { p } = ctx;
    return this.db.transaction().execute(async (trx) => {
      const current = await this.get(p, id, trx);
      assertVersion(current.version);
      const before = presentIncident(current);
      const next = { ...patch, assignee: patch.assignee === undefined ? undefined : (patch.assignee?.toLowerCase() ?? null) };
      const changes = diff(before, next);
      if (Object.keys(changes).length === 0) return current;
      if (changes.assignee) await this.assertAssignee(trx, p, next.assignee);
      const at = this.now();
      const set: Partial<IncidentRow> = { updated_at: at };
      if (next.title !== undefined) set.title = next.title;
      if (next.description !== undefined) set.description = next.description;
      if (next.severity !== undefined) {
        set.severity = next.severity;
        set.severity_rank = SEVERITY_RANK[next.severity];
      }
      if (next.tlp !== undefined) set.tlp = next.tlp;
      if (next.tags !== undefined) set.tags = JSON.stringify(next.tags);
      if (next.assignee !== undefined) set.assignee_id = next.assignee;
      if (changes.status && next.status) {
        const from = current.status as Status;
        const allowed = TRANSITIONS[from];
        if (!allowed.includes(next.status)) {
          throw new AppError('invalid_transition', 409, `Cannot go from ${from} to ${next.status}; allowed: ${allowed.join(', ')}.`, { body: { allowed } });
        }
        set.status = next.status;
        if (next.status === 'resolved') set.resolved_at = at;
        if (next.status === 'closed') {
          set.closed_at = at;
        }
        if (next.status === 'open') {
          set.resolved_at = null;
          set.closed_at = null;
        }
        if (set.resolved_at !== undefined) changes.resolved_at = { from: current.resolved_at, to: set.resolved_at };
        if (set.closed_at !== undefined) changes.closed_at = { from: current.closed_at, to: set.closed_at };
      }
      await this.repo.updateIncident(trx, id, set);
      if (set.status !== undefined || set.severity !== undefined) {
        await this.repo.count(trx, p.organization.id, current.status, current.severity, -1);
        await this.repo.count(trx, p.organization.id, set.status ?? current.status, set.severity ?? current.severity, 1);
      }
      await this.repo.insertEvents(trx, [
        { id: this.deps.newId(), organization_id: p.organization.id, incident_id: id, kind: 'updated', actor_id: p.user.id, changes, ioc_id: null, created_at: at },
      ]);
      await this.audit.recordAs(trx, ctx, { action: 'incident.updated', targetType: 'incident', targetId: id, changes });
      const updated = await this.get(p, id, trx);
      await this.outbox.record(trx, [{ organizationId: p.organization.id, type: 'incident.updated', data: presentIncident(updated) }]);
      return updated;
    });
  }

  async remove(ctx: Ctx, id: string) {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      const iocs = await this.repo.allIocs(trx, ctx.p.organization.id, id);
      await this.repo.deleteIncident(trx, current);
      const at = this.now();
      await this.outbox.record(trx, iocs.map((ioc) => ({ organizationId: ctx.p.organization.id, type: 'ioc.deleted' as const, data: presentIoc({ ...ioc, updated_at: at }) })));
      await this.audit.recordAs(trx, ctx, { action: 'incident.deleted', targetType: 'incident', targetId: id, changes: { title: current.title, ioc_count: current.ioc_count } });
    });
  }

  // --- IOCs ---

  async listIocs(p: Principal, incidentId: string, params: ListParams) {
    await this.get(p, incidentId);
    const qb = iocListing.filter(this.repo.selectIocs(this.db, p.organization.id).where('incident_id', '=', incidentId), params, { dialect: this.deps.database.dialect });
    return iocListing.page(qb, params, presentIoc);
  }

  async addOneIoc(ctx: Ctx, incidentId: string, body: unknown): Promise<IocRow> {
    const { good, rejected } = this.normaliseIocs([body], () => '');
    if (rejected.length) throw validation(rejected[0]!.errors);
    return this.db.transaction().execute(async (trx) => {
      const incident = await this.get(ctx.p, incidentId, trx);
      const { rows } = await this.addIocs(trx, ctx, incident, good);
      if (rows.length === 0) throw conflict(`This incident already has the ${good[0]!.input.type} ${good[0]!.value}.`, 'duplicate');
      return rows[0] as IocRow;
    });
  }

  /**
   * An alert merged into an incident, in the caller's transaction: its IOCs added (duplicates
   * skipped) and an `alert_merged` event on the timeline.
   */
  async mergeAlert(trx: Kysely<DB>, ctx: Ctx, incidentId: string, alert: { id: string; matched_term: string }, iocs: IocInput[]) {
    const incident = await this.get(ctx.p, incidentId, trx);
    const { good } = this.normaliseIocs(iocs, () => '');
    const { rows, duplicates } = await this.addIocs(trx, ctx, incident, good);
    await this.repo.insertEvents(trx, [
      {
        id: this.deps.newId(),
        organization_id: ctx.p.organization.id,
        incident_id: incident.id,
        kind: 'alert_merged',
        actor_id: ctx.p.user.id,
        changes: { alert: alert.id, matched_term: alert.matched_term },
        ioc_id: null,
        created_at: this.now(),
      },
    ]);
    return { incident: await this.get(ctx.p, incident.id, trx), created: rows.length, duplicates };
  }

  async addManyIocs(ctx: Ctx, incidentId: string, items: unknown[]) {
    if (items.length > MAX_BULK_IOCS) throw validation([{ field: 'body', message: `at most ${MAX_BULK_IOCS} IOCs per request` }]);
    const { good, rejected } = this.normaliseIocs(items, () => '');
    return this.db.transaction().execute(async (trx) => {
      const incident = await this.get(ctx.p, incidentId, trx);
      const { rows, duplicates } = await this.addIocs(trx, ctx, incident, good);
      return { created: rows.length, duplicates, rejected };
    });
  }

  async getIoc(p: Principal, incidentId: string, id: string, db: Kysely<DB> = this.db): Promise<IocRow> {
    const row = await this.repo.findIoc(db, p.organization.id, incidentId, id);
    if (!row) throw notFound('No such IOC.');
    return row;
  }

  async updateIoc(
    ctx: Ctx,
    incidentId: string,
    id: string,
    patch: { description?: string; tlp?: Tlp; tags?: string[]; first_seen?: string | null; last_seen?: string | null; expires_at?: string | null },
    assertVersion: (v: number) => void,
  ) {
    return this.db.transaction().execute(async (trx) => {
      const current = await this.getIoc(ctx.p, incidentId, id, trx);
      assertVersion(current.version);
      const changes = diff(presentIoc(current), patch);
      if (Object.keys(changes).length === 0) return current;
      const firstSeen = patch.first_seen === undefined ? current.first_seen : patch.first_seen;
      const expiry = expiryError(patch.expires_at === undefined ? current.expires_at : patch.expires_at, firstSeen ?? current.created_at);
      if (expiry) throw validation([{ field: 'expires_at', message: expiry }]);
      const at = this.now();
      await this.repo.updateIoc(trx, id, {
        ...(patch.description !== undefined && { description: patch.description }),
        ...(patch.tlp !== undefined && { tlp: patch.tlp }),
        ...(patch.tags !== undefined && { tags: JSON.stringify(patch.tags) }),
        ...(patch.first_seen !== undefined && { first_seen: isoOrNull(patch.first_seen) }),
        ...(patch.last_seen !== undefined && { last_seen: isoOrNull(patch.last_seen) }),
        ...(patch.expires_at !== undefined && { expires_at: isoOrNull(patch.expires_at) }),
        updated_at: at,
      });
      await this.audit.recordAs(trx, ctx, { action: 'ioc.updated', targetType: 'ioc', targetId: id, changes });
      const updated = await this.getIoc(ctx.p, incidentId, id, trx);
      await this.outbox.record(trx, [{ organizationId: ctx.p.organization.id, type: 'ioc.updated', data: presentIoc(updated) }]);
      return updated;
    });
  }

  async removeIoc(ctx: Ctx, incidentId: string, id: string) {
    await this.db.transaction().execute(async (trx) => {
      const ioc = await this.getIoc(ctx.p, incidentId, id, trx);
      const at = this.now();
      await this.repo.deleteIoc(trx, id);
      await this.repo.adjustIocCount(trx, incidentId, -1, at);
      await this.repo.insertEvents(trx, [
        { id: this.deps.newId(), organization_id: ctx.p.organization.id, incident_id: incidentId, kind: 'ioc_removed', actor_id: ctx.p.user.id, changes: { type: ioc.type, value: ioc.value }, ioc_id: id, created_at: at },
      ]);
      await this.audit.recordAs(trx, ctx, { action: 'ioc.deleted', targetType: 'ioc', targetId: id, changes: { type: ioc.type, value: ioc.value } });
      // Its last state, stamped with the deletion: a TAXII reader revokes the indicator.
      await this.outbox.record(trx, [{ organizationId: ctx.p.organization.id, type: 'ioc.deleted', data: presentIoc({ ...ioc, updated_at: at }) }]);
    });
  }

  async correlate(p: Principal, params: ListParams) {
    const qb = correlationListing.filter(this.repo.selectCorrelated(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return correlationListing.page(qb, params, (r: IocRow & { incident_title: string; incident_status: string }) => ({
      ...presentIoc(r),
      incident: { id: r.incident_id, title: r.incident_title, status: r.incident_status as Status },
    }));
  }

  // --- events and comments ---

  async listEvents(p: Principal, incidentId: string, params: ListParams) {
    await this.get(p, incidentId);
    const qb = eventListing.filter(this.repo.selectEvents(this.db, p.organization.id, incidentId), params, { dialect: this.deps.database.dialect });
    return eventListing.page(qb, params, (r: { id: string; kind: string; actor_id: string | null; changes: string; ioc_id: string | null; created_at: string }) => ({
      id: r.id,
      kind: r.kind as 'created',
      actor: r.actor_id,
      changes: JSON.parse(r.changes) as Record<string, unknown>,
      ioc: r.ioc_id,
      created_at: r.created_at,
    }));
  }

  async listComments(p: Principal, incidentId: string, params: ListParams) {
    await this.get(p, incidentId);
    const qb = commentListing.filter(this.repo.selectComments(this.db, p.organization.id, incidentId), params, { dialect: this.deps.database.dialect });
    return commentListing.page(qb, params, presentComment);
  }

  async addComment(ctx: Ctx, incidentId: string, body: string) {
    requireRole(ctx.p, 'analyst');
    return this.db.transaction().execute(async (trx) => {
      await this.get(ctx.p, incidentId, trx);
      const at = this.now();
      const row = { id: this.deps.newId(), organization_id: ctx.p.organization.id, incident_id: incidentId, author_id: ctx.p.user.id, body, created_at: at };
      await this.repo.insertComment(trx, row);
      await this.repo.insertEvents(trx, [
        { id: this.deps.newId(), organization_id: ctx.p.organization.id, incident_id: incidentId, kind: 'comment_added', actor_id: ctx.p.user.id, changes: { comment: row.id }, ioc_id: null, created_at: at },
      ]);
      await this.audit.recordAs(trx, ctx, { action: 'comment.created', targetType: 'incident', targetId: incidentId, changes: { comment: row.id } });
      return presentComment(row);
    });
  }

  async allIocs(p: Principal, incidentId: string) {
    return this.repo.allIocs(this.db, p.organization.id, incidentId);
  }

  async stats(p: Principal) {
    const { grouped, mttr } = await this.repo.stats(this.db, p.organization.id);
    const by_status = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<string, number>;
    const by_severity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<string, number>;
    let open = 0;
    for (const g of grouped) {
      by_status[g.status] = (by_status[g.status] ?? 0) + g.n;
      by_severity[g.severity] = (by_severity[g.severity] ?? 0) + g.n;
      if (g.status !== 'resolved' && g.status !== 'closed') open += g.n;
    }
    return { by_status, by_severity, open, mean_time_to_resolve_seconds: mttr === null ? null : Math.round(mttr * 1000) / 1000 };
  }

  countOpen(db: Kysely<DB>, orgId: string) {
    return this.repo.countOpen(db, orgId);
  }
}

/** A timestamp as both dialects give it back (ISO 8601 UTC, milliseconds), or null. */
const isoOrNull = (v: string | null | undefined) => (v ? new Date(v).toISOString() : null);

/** An IOC's expiry must come after the start of its validity (first_seen, or when it is added). */
function expiryError(expiresAt: string | null | undefined, validFrom: string): string | undefined {
  if (!expiresAt) return undefined;
  return Date.parse(expiresAt) > Date.parse(validFrom) ? undefined : 'must be later than first_seen (or than now, without first_seen)';
}

export function typeboxErrors(errors: Array<{ keyword: string; instancePath: string; params: Record<string, unknown>; message?: string }>): FieldError[] {
  const mapped = errors
    .filter((e) => e.keyword !== 'additionalProperties')
    .flatMap((e) => {
      if (e.keyword === 'boolean') {
        return [{ ...e, keyword: 'additionalProperties', instancePath: e.instancePath.replace(/\/[^/]*$/, ''), params: { additionalProperty: e.instancePath.split('/').pop() } }];
      }
      if (e.keyword === 'required' && Array.isArray(e.params.requiredProperties)) {
        return (e.params.requiredProperties as string[]).map((missingProperty) => ({ ...e, params: { missingProperty } }));
      }
      return [e];
    });
  return fieldErrors(mapped);
}
