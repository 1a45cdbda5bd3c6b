import type { AppDeps } from '../../deps.js';
import type { AuditLog } from '../audit/audit.repository.js';
import type { AppHookRegistry } from '../hooks.js';
import type { IncidentsService } from '../incidents/index.js';
import { MonitoringRepository } from './monitoring.repository.js';
import { monitoringRoutes } from './monitoring.routes.js';
import { MonitoringService } from './monitoring.service.js';

export { MonitoringService };

/**
 * Monitoring: an organization's monitors (the matcher over ingested records, scans and alert
 * triage come next). Its figures fill GET /organization/usage/ (monitors) and GET /leaks/stats/.
 */
export function createMonitoringModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId'> & { audit: AuditLog; hooks: AppHookRegistry; incidents: IncidentsService }) {
  const service = new MonitoringService(ctx, new MonitoringRepository(ctx.database.dialect), ctx.audit, ctx.incidents);
  ctx.hooks.on('organizations.usage', async (db, orgId, key) => (key === 'monitors' ? service.countMonitors(db, orgId) : undefined));
  ctx.hooks.on('leaks.organizationFigures', (db, orgId) => service.organizationFigures(db, orgId));
  ctx.hooks.on('leaks.ingested', (trx, records) => service.raiseAlerts(trx, records));
  return { name: 'monitoring', service, routes: [{ plugin: monitoringRoutes, options: { monitoring: service } }] } as const;
}
