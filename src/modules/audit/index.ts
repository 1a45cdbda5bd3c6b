import type { AppDeps } from '../../deps.js';
import { AuditLog } from './audit.repository.js';
import { auditRoutes } from './audit.routes.js';

export { AuditLog, diff } from './audit.repository.js';

/** The audit log: every module records its writes through `log`; admins read it at /audit-log/. */
export function createAuditModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId'>) {
  const log = new AuditLog(ctx.clock, ctx.newId);
  return { name: 'audit', log, routes: [{ plugin: auditRoutes, options: { deps: ctx, log } }] } as const;
}
