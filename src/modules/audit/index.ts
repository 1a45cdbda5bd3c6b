import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import { AuditLog } from './audit.repository.js';
import { auditRoutes } from './audit.routes.js';
import type { Module } from '../module-parts.js';

export { type Actor, AuditLog, diff } from './audit.repository.js';

/** What the audit module is made from: `caller` names the organization a request is by. */
export type AuditDeps = Pick<AppDeps, 'database' | 'clock' | 'newId'> & { caller: (request: FastifyRequest) => { organization: { id: string } } };

/** The audit log: every module records its writes through `log`; admins read it at /audit-log/. */
export function createAuditModule(ctx: AuditDeps) {
  const log = new AuditLog(ctx.clock, ctx.newId);
  return { name: 'audit', log, routes: [bind(auditRoutes, { database: ctx.database, log, caller: ctx.caller })] } as const satisfies Module;
}
