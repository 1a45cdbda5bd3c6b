import type { Generated } from 'kysely';

/** The tables of the feeds module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface FeedsTable {
  id: string;
  organization_id: string;
  name: string;
  kind: string;
  url: string;
  options: string;
  auth: string | null;
  interval_seconds: number;
  is_active: boolean | number;
  cursor: string | null;
  next_pull_at: string;
  lease_until: string | null;
  last_pull_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  consecutive_failures: Generated<number>;
  objects_read: Generated<number>;
  indicators_added: Generated<number>;
  indicators_updated: Generated<number>;
  indicators_retired: Generated<number>;
  rejected: Generated<number>;
  records_added: Generated<number>;
  reject_examples: string;
  version: Generated<number>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface IndicatorsTable {
  id: string;
  organization_id: string;
  type: string;
  value: string;
  stix_id: string | null;
  name: string | null;
  confidence: number | null;
  tlp: string | null;
  labels: string;
  valid_until: string | null;
  modified: string | null;
  revoked: boolean | number;
  false_positive: boolean | number;
  note: string | null;
  first_seen: string;
  last_seen: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface IndicatorFeedsTable {
  indicator_id: string;
  feed_id: string;
  first_seen: string;
  last_seen: string;
}

declare module '../../db/schema.js' {
  interface DB {
    feeds: FeedsTable;
    indicators: IndicatorsTable;
    indicator_feeds: IndicatorFeedsTable;
  }
}
