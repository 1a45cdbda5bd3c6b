import type { FastifyRequest } from 'fastify';
import type { Plan } from '../../config.js';
import { forbidden } from '../../http/errors.js';
import { ROLE_RANK, type Role } from '../../domain/roles.js';
import { toUser, type User, type UserRow } from './users.repository.js';
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

/**
 * The principal of a user row with its organization's name and plan (UsersRepository's
 * principalLookup): frozen, since the requests that find it remembered share it. `role` is the
 * user's unless an API key acting for the user has its own.
 */
export function framePrincipal(
  row: UserRow & { org_name: string; org_plan: string },
  parts: { endedSessions: ReadonlySet<string>; role?: Role; apiKey?: Principal['apiKey'] },
): Principal {
  const { org_name, org_plan, ...userRow } = row;
  const user = Object.freeze(toUser(userRow));
  return Object.freeze({
    user,
    organization: Object.freeze({ id: user.organization_id, name: org_name, plan: org_plan as Plan }),
    role: parts.role ?? user.role,
    isStaff: user.is_staff,
    endedSessions: parts.endedSessions,
    ...(parts.apiKey && { apiKey: Object.freeze(parts.apiKey) }),
  });
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

/**
 * What a person does about their own credentials (their password, their API keys) needs a person's
 * session: 403 for an API key, which acts for a person without being one.
 */
export function requirePerson(p: Principal, refusal: string): void {
  if (p.apiKey) throw forbidden(`${refusal}: log in to do this.`);
}

export function hasRole(p: Principal, role: Role): boolean {
  return ROLE_RANK[p.role] >= ROLE_RANK[role];
}

export function requireRole(p: Principal, role: Role): void {
  if (!hasRole(p, role)) throw forbidden(`This action needs the ${role} role.`);
}
