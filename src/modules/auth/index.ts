import type { AppDeps } from '../../deps.js';
import type { AuditLog } from '../audit/audit.repository.js';
import type { AppHookRegistry } from '../hooks.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';
import type { UsersRepository, UsersService } from '../users/index.js';
import { authenticate } from './auth.hook.js';
import { privateAuthRoutes, publicAuthRoutes } from './auth.routes.js';
import { AuthService } from './auth.service.js';
import { PasswordPolicy } from './passwords.js';
import { loadJwtSecret, TokenService } from './tokens.js';

export { authenticate } from './auth.hook.js';
export { actorOf, hasRole, type Principal, principalOf, requireRole } from './principal.js';
export { AuthService, PasswordPolicy, TokenService };

/** The password policy users and organizations apply; breach checks plug in through auth.breachCheck. */
export const createPasswordPolicy = (hooks: AppHookRegistry) => new PasswordPolicy(hooks);

/**
 * Tokens, login and sessions: the public token endpoints, the authentication hook every other route
 * runs behind (`authenticate`, with the tokens it verifies), and /auth/me/ and /auth/password/.
 */
export function createAuthModule(
  ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'counters' | 'metrics' | 'principals'> & {
    audit: AuditLog;
    hooks: AppHookRegistry;
    passwordPolicy: PasswordPolicy;
    users: { repository: UsersRepository; service: UsersService };
    orgs: OrganizationsService;
  },
) {
  const tokens = new TokenService(loadJwtSecret(ctx.config), ctx.config, ctx.clock, ctx.newId);
  const service = new AuthService(ctx, tokens, ctx.users.repository, ctx.users.service, ctx.audit, ctx.passwordPolicy, ctx.hooks);
  return {
    name: 'auth',
    tokens,
    service,
    publicRoutes: [{ plugin: publicAuthRoutes, options: { auth: service } }],
    authenticate: { plugin: authenticate, options: { deps: ctx, tokens, hooks: ctx.hooks } },
    routes: [{ plugin: privateAuthRoutes, options: { auth: service, orgs: ctx.orgs } }],
  } as const;
}
