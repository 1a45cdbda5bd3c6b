import type { AppDeps } from '../../deps.js';
import type { AuditLog } from '../audit/audit.repository.js';
import type { PasswordPolicy } from '../auth/passwords.js';
import { UsersRepository } from './users.repository.js';
import { usersRoutes } from './users.routes.js';
import { UsersService } from './users.service.js';

export { ROLE_RANK, ROLES, type Role, type User } from './users.repository.js';
export type { NewUser } from './users.service.js';
export { UsersRepository, UsersService };
export { USERNAME_PATTERN } from './users.schemas.js';

/** The users of each organization: admins manage them at /users/. */
export function createUsersModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'principals'> & { audit: AuditLog; passwordPolicy: PasswordPolicy }) {
  const repository = new UsersRepository();
  const service = new UsersService(ctx, repository, ctx.audit, ctx.passwordPolicy);
  return { name: 'users', repository, service, routes: [{ plugin: usersRoutes, options: { deps: ctx, users: service } }] } as const;
}
