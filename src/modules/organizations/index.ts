import type { AppDeps } from '../../deps.js';
import type { AuditLog } from '../audit/audit.repository.js';
import type { AppHookRegistry } from '../hooks.js';
import type { UsersService } from '../users/users.service.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { organizationsRoutes } from './organizations.routes.js';
import { OrganizationsService } from './organizations.service.js';

export { OrganizationsService };

/** Organizations, their plan and usage (which other modules' figures fill through organizations.usage). */
export function createOrganizationsModule(
  ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'counters' | 'principals'> & { audit: AuditLog; users: UsersService; hooks: AppHookRegistry },
) {
  const service = new OrganizationsService(ctx, new OrganizationsRepository(), ctx.users, ctx.audit, ctx.hooks);
  return { name: 'organizations', service, routes: [{ plugin: organizationsRoutes, options: { deps: ctx, orgs: service } }] } as const;
}
