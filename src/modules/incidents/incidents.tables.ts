import type { Generated } from 'kysely';

/** The tables of the incidents module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface IncidentsTable {
  id: string;
  organization_id: string;
  title: string;
  description: string;
  status: string;
  severity: string;
  severity_rank: number;
  tlp: string;
  /** JSON array of strings. */
  tags: string;
  assignee_id: string | null;
  source_alert_id: string | null;
  ioc_count: Generated<number>;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  closed_at: string | null;
}

export interface IncidentCountersTable {
  organization_id: string;
  status: string;
  severity: string;
  n: number;
}

export interface IocsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  type: string;
  value: string;
  description: string;
  tlp: string;
  tags: string;
  first_seen: string | null;
  last_seen: string | null;
  expires_at: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface IncidentEventsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  kind: string;
  actor_id: string | null;
  changes: string;
  ioc_id: string | null;
  created_at: string;
}

export interface IncidentCommentsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  author_id: string | null;
  body: string;
  created_at: string;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    incidents: IncidentsTable;
    incident_counters: IncidentCountersTable;
    iocs: IocsTable;
    incident_events: IncidentEventsTable;
    incident_comments: IncidentCommentsTable;
  }
}
