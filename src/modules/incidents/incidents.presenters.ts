import type { IocType } from '../../domain/ioc.js';
import type { IncidentRow, IocRow } from './incidents.repository.js';
import type { IncidentOut, IocOut, Severity, Status, Tlp } from './incidents.schemas.js';

/** The incidents module's resources as the API shows them. */

export function presentIncident(r: IncidentRow): IncidentOut {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    status: r.status as Status,
    severity: r.severity as Severity,
    tlp: r.tlp as Tlp,
    tags: JSON.parse(r.tags) as string[],
    assignee: r.assignee_id,
    source_alert: r.source_alert_id,
    ioc_count: r.ioc_count,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    resolved_at: r.resolved_at,
    closed_at: r.closed_at,
  };
}

export function presentIoc(r: IocRow): IocOut {
  return {
    id: r.id,
    incident: r.incident_id,
    type: r.type as IocType,
    value: r.value,
    description: r.description,
    tlp: r.tlp as Tlp,
    tags: JSON.parse(r.tags) as string[],
    first_seen: r.first_seen,
    last_seen: r.last_seen,
    expires_at: r.expires_at,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentComment(r: { id: string; author_id: string | null; body: string; created_at: string }) {
  return { id: r.id, author: r.author_id, body: r.body, created_at: r.created_at };
}
