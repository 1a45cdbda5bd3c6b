/** The tables of the events module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

/** The outbox: one row per domain event, written in the transaction of its change. */
export interface EventsTable {
  id: string;
  organization_id: string;
  type: string;
  /** JSON: the resource as the API shows it. */
  data: string;
  created_at: string;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    events: EventsTable;
  }
}
