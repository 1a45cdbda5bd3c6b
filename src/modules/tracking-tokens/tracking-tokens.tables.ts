import type { Generated } from 'kysely';

/** The tables of the tracking-tokens module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface TrackingTokensTable {
  id: string;
  organization_id: string;
  name: string;
  memo: string;
  /** web_bug, redirect, credential or api_key. */
  kind: string;
  /** active or disabled. */
  status: string;
  /** The key of /t/<key>/ (web_bug, redirect). */
  trigger_key: string | null;
  redirect_url: string | null;
  username: string | null;
  username_lower: string | null;
  password: string | null;
  /** SHA-1 of the password, upper-case hex as the leak corpus keeps it. */
  password_sha1: string | null;
  api_key: string | null;
  api_key_sha1: string | null;
  /** JSON array of addresses and CIDR ranges, normalised. */
  ignore_ips: string;
  exposure_count: Generated<number | string>;
  last_exposed_at: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface TrackingTokenExposuresTable {
  id: string;
  organization_id: string;
  token_id: string;
  /** http, login, api_key or leak. */
  channel: string;
  occurred_at: string;
  source_ip: string | null;
  user_agent: string | null;
  referer: string | null;
  method: string | null;
  path: string | null;
  leak_record_id: string | null;
  leak_source_id: string | null;
  leak_source_name: string | null;
  /** JSON: the indicators that named its address, Referer or User-Agent when it happened. */
  indicator_matches: Generated<string>;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    tracking_tokens: TrackingTokensTable;
    tracking_token_exposures: TrackingTokenExposuresTable;
    tracking_token_generation: { id: number; n: number };
  }
}
