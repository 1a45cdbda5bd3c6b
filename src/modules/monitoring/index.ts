import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import { type BackgroundJob, JobLoop } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import type { Outbox } from '../events/index.js';
import type { AppHookRegistry } from '../hooks.js';
import type { IncidentsService } from '../incidents/index.js';
import { MonitoringRepository } from './monitoring.repository.js';
import { monitoringRoutes } from './monitoring.routes.js';
import type { ScanOptions } from './monitoring.scans.js';
import { MonitoringService } from './monitoring.service.js';
import { AlertSchema, ScanSchema } from './monitoring.schemas.js';
import type { Module } from '../module-parts.js';

export { MonitoringService };
export type { ScanOptions };

/**
 * Monitoring: an organization's monitors, the matcher over every ingested record, scans of the
 * corpus (a background job), alerts and their triage. Its figures fill GET /organization/usage/
 * (monitors) and GET /leaks/stats/; its events go to the outbox.
 */
export function createMonitoringModule(
  ctx: Pick<AppDeps, 'database' | 'clock' | 'newId'> & { audit: AuditLog; hooks: AppHookRegistry; incidents: IncidentsService; outbox: Outbox; scans?: ScanOptions },
) {
  const service = new MonitoringService(ctx, new MonitoringRepository(ctx.database.dialect), ctx.audit, ctx.incidents, ctx.outbox, ctx.scans, ctx.hooks);
  // The alert counts' delta rows folded into one per key, so that a count reads a few rows (see migration 0018).
  const folding: JobLoop = new JobLoop(() => service.foldAlertCounts(() => folding.stopping), 'alert counts: folding failed', { pollMs: 5_000 });
  ctx.hooks.on('organizations.usage', async (db, orgId, key) => (key === 'monitors' ? service.countMonitors(db, orgId) : undefined));
  ctx.hooks.on('leaks.organizationFigures', (db, orgId) => service.organizationFigures(db, orgId));
  ctx.hooks.on('leaks.ingested', (trx, records) => service.raiseAlerts(trx, records));
  ctx.hooks.on('leaks.sourceRenamed', (trx, source) => service.sourceRenamed(trx, source.id));
  return {
    name: 'monitoring',
    service,
    // What its events carry, for the OpenAPI document's webhooks.
    events: { 'alert.created': AlertSchema, 'alert.updated': AlertSchema, 'monitor.scan_completed': ScanSchema },
    routes: [bind(monitoringRoutes, { monitoring: service })],
    jobs: [
      { name: 'monitor scans', start: (log) => service.scans.start(log), stop: () => service.scans.stop() },
      { name: 'alert counts', start: (log) => folding.start(log), stop: () => folding.stop() },
    ] satisfies BackgroundJob[],
  } as const satisfies Module;
}
