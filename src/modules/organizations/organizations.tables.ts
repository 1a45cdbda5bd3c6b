import type { Generated } from 'kysely';

/** The tables of the organizations module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

/** Row types as stored. Timestamps are ISO strings on both dialects; booleans are 0/1 on SQLite. */
export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    organizations: OrganizationsTable;
  }
}
