import type { AlertRow, MonitorWithFigures } from './monitoring.repository.js';
import type { AlertOut, MonitorOut, ScanOut } from './monitoring.schemas.js';
import type { ScanRow } from './monitoring.scans.repository.js';

/** The module's resources as the API shows them. */

export function presentAlert(r: AlertRow): AlertOut {
  return {
    id: r.id,
    monitor: { id: r.monitor_id, name: r.monitor_name },
    severity: r.severity as AlertOut['severity'],
    status: r.status as AlertOut['status'],
    matched_term: r.matched_term,
    matched_field: r.matched_field,
    leak_record: JSON.parse(r.record_json) as AlertOut['leak_record'],
    incident: r.incident_id,
    note: r.note,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentMonitor(r: MonitorWithFigures): MonitorOut {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    type: r.type as MonitorOut['type'],
    terms: JSON.parse(r.terms) as string[],
    status: r.status as MonitorOut['status'],
    severity: r.severity as MonitorOut['severity'],
    alert_count: Number(r.alert_count ?? 0),
    alerts_open: Number(r.alerts_open ?? 0),
    last_match_at: r.last_match_at ?? null,
    last_scan_at: r.last_scan_at,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentScan(r: ScanRow): ScanOut {
  return {
    id: r.id,
    monitor: r.monitor_id,
    reason: r.reason as ScanOut['reason'],
    status: r.status as ScanOut['status'],
    records_scanned: Number(r.records_scanned),
    alerts_raised: Number(r.alerts_raised),
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
  };
}
