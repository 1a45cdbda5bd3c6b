import type { Generated } from 'kysely';

/** The tables of the taxii module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface TaxiiObjectsTable {
  pk: Generated<number>;
  organization_id: string;
  collection: string;
  stix_id: string;
  type: string;
  version: string;
  added_us: number | null;
  first: boolean | number;
  superseded: boolean | number;
  object: string;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    taxii_collections: { id: string; organization_id: string; kind: string; created_at: string };
    taxii_objects: TaxiiObjectsTable;
  }
}
