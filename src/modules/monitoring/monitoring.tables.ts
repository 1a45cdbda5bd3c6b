import type { ColumnType, Generated } from 'kysely';

/** The tables of the monitoring module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface MonitorsTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  type: string;
  /** JSON array of the normalised terms. */
  terms: string;
  status: string;
  /** The severity of its alerts; null: each alert takes its record's (migration 0023). */
  severity: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_scan_at: string | null;
}

/** Alert count deltas by key, appended by triggers on monitor_alerts (migration 0018); a count is the sum of its key's rows. */
export interface MonitorAlertCountsTable {
  organization_id: string;
  monitor_id: string;
  status: string;
  severity: string;
  n: number;
}

export interface MonitorAlertsTable {
  id: string;
  organization_id: string;
  monitor_id: string;
  leak_record_id: string;
  matched_term: string;
  matched_field: string;
  severity: string;
  status: string;
  note: string;
  incident_id: string | null;
  /** The leak record's JSON text, as LeakRecordSchema shows it (migration 0020); written by insertAlerts right after the row. */
  record_json: ColumnType<string, undefined, string>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface MonitorScansTable {
  id: string;
  organization_id: string;
  monitor_id: string;
  /** created (the backfill of a new monitor) or requested (POST .../scan/). */
  reason: string;
  /** queued, running or completed. */
  status: string;
  /** JSON array: the monitor's terms when the scan started (null while queued). */
  terms: string | null;
  /** JSON: where the scan goes on from (null: from the start). */
  cursor: string | null;
  records_scanned: Generated<number | string>;
  alerts_raised: Generated<number | string>;
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    monitors: MonitorsTable;
    monitor_alerts: MonitorAlertsTable;
    monitor_alert_counts: MonitorAlertCountsTable;
    monitor_generation: { id: number; n: number };
    monitor_scans: MonitorScansTable;
  }
}
