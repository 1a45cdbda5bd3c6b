import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { BackgroundJob } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import type { Outbox } from '../events/index.js';
import type { AppHookRegistry } from '../hooks.js';
import type { Module } from '../module-parts.js';
import type { FeedCorpus } from './feeds.hibp.js';
import { FeedsRepository } from './feeds.repository.js';
import { feedsRoutes } from './feeds.routes.js';
import { FeedsService } from './feeds.service.js';
import { IndicatorMatchedSchema } from './feeds.schemas.js';

export { FeedsService };
export type { FeedCorpus, UpstreamBreach } from './feeds.hibp.js';


/**
 * Intelligence in: feeds of an organization (STIX bundles, indicator lists) pulled on a schedule by
 * a background job, and the indicators they bring, deduplicated by type and normalised value.
 */
export function createFeedsModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config'> & { audit: AuditLog; hooks: AppHookRegistry; outbox: Outbox; corpus?: FeedCorpus }) {
  const service = new FeedsService(ctx, new FeedsRepository(), ctx.audit, ctx.outbox, ctx.corpus);
  // The feed context of incident IOCs: the indicators naming the same type and value.
  ctx.hooks.on('incidents.intel', (db, orgId, iocs) => service.intelFor(db, orgId, iocs));
  // Indicators put to work: what tokens, searches and alerts saw, and every ingested record.
  ctx.hooks.on('indicators.match', (db, orgId, observed) => service.match(db, orgId, observed));
  ctx.hooks.on('leaks.ingested', (trx, records, source) => service.onIngested(trx, records, source));
  return {
    name: 'feeds',
    service,
    // What its events carry, for the OpenAPI document's webhooks.
    events: { 'indicator.matched': IndicatorMatchedSchema },
    routes: [bind(feedsRoutes, { feeds: service })],
    jobs: [{ name: 'feeds', start: (log) => service.puller.start(log), stop: () => service.puller.stop() }] satisfies BackgroundJob[],
  } as const satisfies Module;
}
