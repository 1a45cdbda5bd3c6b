import type { Generated } from 'kysely';

/** Row types as stored. Timestamps are ISO strings on both dialects; booleans are 0/1 on SQLite. */
export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

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

export interface DB {
  organizations: OrganizationsTable;
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  audit_log: AuditLogTable;
}
