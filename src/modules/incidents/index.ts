import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { AuditLog } from '../audit/index.js';
import type { Outbox } from '../events/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { IncidentsRepository } from './incidents.repository.js';
import { iocIntel } from './incidents.intel.js';
import { incidentsRoutes } from './incidents.routes.js';
import { IncidentsService } from './incidents.service.js';
import { IncidentSchema, IocSchema } from './incidents.schemas.js';
import type { Module } from '../module-parts.js';

export { IncidentsService };
export { presentIncident } from './incidents.presenters.js';
export { IncidentSchema, SEVERITIES, type Severity } from './incidents.schemas.js';

/** Incidents and their IOCs; the open count is its figure of /organization/usage/. */
export function createIncidentsModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId'> & { audit: AuditLog; hooks: AppHookRegistry; outbox: Outbox }) {
  const service = new IncidentsService(ctx, new IncidentsRepository(ctx.database.dialect), ctx.audit, ctx.outbox);
  ctx.hooks.on('organizations.usage', async (db, orgId, key) => (key === 'incidents_open' ? service.countOpen(db, orgId) : undefined));
  // What its events carry, for the OpenAPI document's webhooks.
  const events = { 'incident.created': IncidentSchema, 'incident.updated': IncidentSchema, 'ioc.created': IocSchema, 'ioc.updated': IocSchema, 'ioc.deleted': IocSchema };
  return { name: 'incidents', service, events, routes: [bind(incidentsRoutes, { incidents: service, intel: iocIntel(ctx.hooks, () => ctx.database.db) })] } as const satisfies Module;
}
