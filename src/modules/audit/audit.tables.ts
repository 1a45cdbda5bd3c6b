/** The tables of the audit module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface AuditLogTable {
  id: string;
  organization_id: string | null;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  ip: string | null;
  /** JSON text: {field: {from, to}} or any object describing the change. */
  changes: string;
  created_at: string;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    audit_log: AuditLogTable;
  }
}
