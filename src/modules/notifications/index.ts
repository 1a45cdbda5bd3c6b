import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { BackgroundJob } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { NotificationsRepository } from './notifications.repository.js';
import { notificationsRoutes } from './notifications.routes.js';
import { NotificationsService } from './notifications.service.js';
import { Transport } from './notifications.transport.js';
import type { Module } from '../module-parts.js';

export { NotificationsService };

/**
 * Notifications for people: e-mail and chat channels fed by the domain events (events.recorded,
 * queued in the event's transaction), sent by a background job with retries and per-minute digests.
 */
export function createNotificationsModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'metrics'> & { audit: AuditLog; hooks: AppHookRegistry }) {
  const service = new NotificationsService(ctx, new NotificationsRepository(ctx.database.dialect), new Transport(ctx.config), ctx.audit);
  ctx.hooks.on('events.recorded', (trx, events) => service.queue.enqueue(trx, events));
  return {
    name: 'notifications',
    service,
    routes: [bind(notificationsRoutes, { notifications: service })],
    jobs: [{ name: 'notifications', start: (log) => service.sender.start(log), stop: () => service.sender.stop() }] satisfies BackgroundJob[],
  } as const satisfies Module;
}
