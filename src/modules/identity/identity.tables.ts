import type { Generated } from 'kysely';

/** The tables of the identity module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

export interface UsersTable {
  id: string;
  organization_id: string;
  username: string;
  email: string;
  password_hash: string;
  role: string;
  is_active: boolean | number;
  is_staff: boolean | number;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export interface RefreshTokensTable {
  jti: string;
  user_id: string;
  family_id: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

/** API keys (migration 0024): the key itself is never stored, only its SHA-256. */
export interface ApiKeysTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  role: string;
  prefix: string;
  key_hash: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    users: UsersTable;
    refresh_tokens: RefreshTokensTable;
    api_keys: ApiKeysTable;
    api_key_ips: { api_key_id: string; ip: string; first_seen_at: string };
  }
}
