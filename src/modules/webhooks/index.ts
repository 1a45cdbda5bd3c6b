import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { BackgroundJob } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { webhooksRoutes } from './webhooks.routes.js';
import { WebhooksService } from './webhooks.service.js';
import type { Module } from '../module-parts.js';

export { WebhooksService };
// Notifications post to chat services as webhooks do: the same guarded sender and destination check.
export { send } from './webhooks.sender.js';
export { destinationUrl } from './webhooks.ssrf.js';
export { type Fetched, FetchRefused, fetchGuarded } from './webhooks.fetch.js';

/**
 * Webhooks: each event recorded in the outbox (events.recorded) queues a message per subscribed
 * webhook of its organization, in the same transaction; a background job delivers them.
 */
export function createWebhooksModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'metrics'> & { audit: AuditLog; hooks: AppHookRegistry }) {
  const service = new WebhooksService(ctx, new WebhooksRepository(ctx.database.dialect), ctx.audit);
  ctx.hooks.on('events.recorded', (trx, events) => service.queue(trx, events));
  return {
    name: 'webhooks',
    service,
    routes: [bind(webhooksRoutes, { webhooks: service })],
    jobs: [{ name: 'webhook deliveries', start: (log) => service.start(log), stop: () => service.stop() }] satisfies BackgroundJob[],
  } as const satisfies Module;
}
