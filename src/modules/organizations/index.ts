import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import type { AuthService, UsersService } from '../identity/index.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { organizationsRoutes } from './organizations.routes.js';
import { OrganizationsService } from './organizations.service.js';
import type { Module } from '../module-parts.js';

export { OrganizationsService };

/** What the organizations module is made from. */
export type OrganizationsDeps = Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'counters' | 'principals'> & {
  audit: AuditLog;
  hooks: AppHookRegistry;
  users: UsersService;
  auth: Pick<AuthService, 'currentUser'>;
};

/**
 * Organizations, their plan and usage (which other modules' figures fill through
 * organizations.usage), and GET /auth/me/: the caller with its organization.
 */
export function createOrganizationsModule(ctx: OrganizationsDeps) {
  const service = new OrganizationsService(ctx, new OrganizationsRepository(), ctx.users, ctx.audit, ctx.hooks);
  return { name: 'organizations', service, routes: [bind(organizationsRoutes, { orgs: service, auth: ctx.auth })] } as const satisfies Module;
}
