import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { apiKeysRoutes } from './api-keys.routes.js';
import { ApiKeysService } from './api-keys.service.js';
import { authenticate } from './auth.hook.js';
import { privateAuthRoutes, publicAuthRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';
import { sessionRoutes } from './session.routes.js';
import { PasswordPolicy } from './passwords.js';
import { loadJwtSecret, TokenService } from './tokens.js';
import { UsersRepository } from './users.repository.js';
import { usersRoutes } from './users.routes.js';
import { UsersService } from './users.service.js';
import type { Module } from '../module-parts.js';

export { actorOf, hasRole, type Principal, principalOf, requireRole } from './principal.js';
export { ROLE_RANK, ROLES, type Role } from '../../domain/roles.js';
export type { User } from './users.repository.js';
export { UserSchema } from './users.schemas.js';
export { presentUser } from './identity.presenters.js';
export type { NewUser } from './users.service.js';
export { USERNAME_PATTERN } from './users.schemas.js';
export { AuthService, PasswordPolicy, TokenService, UsersService, ApiKeysService };
export { apiKeyOf, applyRateLimit } from './auth.hook.js';
export { invalidApiKey } from './api-keys.service.js';

/** What the identity module is made from. */
export type IdentityDeps = Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'counters' | 'metrics' | 'principals'> & {
  audit: AuditLog;
  hooks: AppHookRegistry;
};

/**
 * Who is asking: users and their roles, passwords (the policy, whose breach check plugs in through
 * auth.breachCheck), tokens, sessions and the principal. It serves the public token endpoints, the
 * authentication hook every other route runs behind, /auth/password/ and /users/.
 */
export function createIdentityModule(ctx: IdentityDeps) {
  const passwordPolicy = new PasswordPolicy(ctx.hooks);
  const usersRepository = new UsersRepository();
  const users = new UsersService(ctx, usersRepository, ctx.audit, passwordPolicy);
  const tokens = new TokenService(loadJwtSecret(ctx.config), ctx.config, ctx.clock, ctx.newId);
  const auth = new AuthService(ctx, tokens, usersRepository, users, ctx.audit, passwordPolicy, ctx.hooks);
  const keys = new ApiKeysService(ctx, new ApiKeysRepository(), usersRepository, ctx.audit);
  return {
    name: 'identity',
    tokens,
    passwordPolicy,
    users,
    auth,
    keys,
    publicRoutes: [bind(publicAuthRoutes, { auth }), bind(sessionRoutes, { auth, tokens })],
    authenticate: bind(authenticate, { deps: ctx, tokens, keys, hooks: ctx.hooks }),
    /** The same, also taking HTTP Basic (TAXII clients): a plugin for a scope outside /api/v1. */
    authenticateWithBasic: bind(authenticate, { deps: ctx, tokens, keys, hooks: ctx.hooks, basic: auth }),
    routes: [bind(privateAuthRoutes, { auth }), bind(usersRoutes, { users }), bind(apiKeysRoutes, { keys })],
  } as const satisfies Module;
}
