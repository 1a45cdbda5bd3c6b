import type { Role } from '../../domain/roles.js';
import type { ApiKeyRow } from './api-keys.repository.js';
import type { ApiKeyOut } from './api-keys.schemas.js';
import type { User } from './users.repository.js';
import type { UserOut } from './users.schemas.js';

/** The identity module's resources as the API shows them. */

export function presentUser(u: User): UserOut {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    role: u.role,
    is_active: u.is_active,
    is_staff: u.is_staff,
    created_at: u.created_at,
    last_login_at: u.last_login_at,
  };
}

export function presentApiKey(r: ApiKeyRow): ApiKeyOut {
  return {
    id: r.id,
    name: r.name,
    role: r.role as Role,
    prefix: r.prefix,
    created_by: r.user_id,
    created_at: r.created_at,
    expires_at: r.expires_at,
    last_used_at: r.last_used_at,
  };
}
