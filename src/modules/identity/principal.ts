import type { FastifyRequest } from 'fastify';
import type { Plan } from '../../config.js';
import { forbidden } from '../../http/errors.js';
import { ROLE_RANK, type Role, type User } from './users.repository.js';
import { unauthenticated } from './tokens.js';

/** Who a request is by: its user, organization and role, as the authentication hook found them. */
export interface Principal {
  user: User;
  organization: { id: string; name: string; plan: Plan };
  role: Role;
  isStaff: boolean;
  /**
   * The user's sessions that ended (logout, password change, reuse detection, deactivation) while
   * access tokens issued in them may still be within their lifetime: those tokens are refused.
   */
  endedSessions: ReadonlySet<string>;
  /** Set when the request came with an API key: the key, acting as `user` with `role`. */
  apiKey?: { id: string; expiresAt: string | null };
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthenticated('not_authenticated', 'Authentication credentials were not provided.');
  return request.principal;
}

/** The caller and its address: who an audited change is by. */
export function actorOf(request: FastifyRequest): { p: Principal; ip: string } {
  return { p: principalOf(request), ip: request.ip };
}

export function hasRole(p: Principal, role: Role): boolean {
  return ROLE_RANK[p.role] >= ROLE_RANK[role];
}

export function requireRole(p: Principal, role: Role): void {
  if (!hasRole(p, role)) throw forbidden(`This action needs the ${role} role.`);
}
