import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { AuditLog } from '../audit/index.js';
import type { Outbox } from '../events/index.js';
import type { AppHookRegistry, IndicatorMatchHook } from '../hooks.js';
import type { UsersService } from '../identity/index.js';
import { TrackingTokensRepository } from './tracking-tokens.repository.js';
import { trackingTokensRoutes } from './tracking-tokens.routes.js';
import { TrackingTokensService } from './tracking-tokens.service.js';
import { triggerRoutes } from './tracking-tokens.trigger.js';
import { ExposureSchema } from './tracking-tokens.schemas.js';
import type { Module } from '../module-parts.js';

export { TrackingTokensService };

/**
 * Tracking tokens: canaries watched over four channels, each a subscription: the trigger route
 * (/t/<key>/, outside /api/v1), logins (auth.loginAttempt), bearer keys (auth.unknownBearer) and
 * ingested leak data (leaks.ingested). Its count is a figure of /organization/usage/.
 */
export function createTrackingTokensModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'counters' | 'config'> & { audit: AuditLog; hooks: AppHookRegistry; outbox: Outbox; users: Pick<UsersService, 'usernameTaken'> }) {
  // Asked at each hit, not now: the feeds module subscribes after this one is made.
  const indicators: IndicatorMatchHook = (db, orgId, observed) => ctx.hooks.of('indicators.match')[0]?.(db, orgId, observed) ?? Promise.resolve(observed.map(() => []));
  const service = new TrackingTokensService(ctx, new TrackingTokensRepository(ctx.database.dialect), ctx.audit, ctx.outbox, ctx.users, indicators);
  ctx.hooks.on('organizations.usage', async (db, orgId, key) => (key === 'tracking_tokens' ? service.countTokens(db, orgId) : undefined));
  ctx.hooks.on('auth.loginAttempt', (username, client) => service.onLogin(username, client));
  ctx.hooks.on('auth.unknownBearer', (token, client) => service.onBearer(token, client));
  ctx.hooks.on('leaks.ingested', (trx, records, source) => service.exposeInLeaks(trx, records, source));
  return {
    name: 'tracking-tokens',
    service,
    // What its events carry, for the OpenAPI document's webhooks.
    events: { 'tracking_token.exposed': ExposureSchema },
    routes: [bind(trackingTokensRoutes, { tokens: service })],
    siteRoutes: [bind(triggerRoutes, { tokens: service })],
    /** Paths whose next segment is a secret (a token's trigger key): the access log keeps only its start. */
    secretPaths: ['/t/'],
    // In every process: hits are recorded where they arrive; closing waits for those in hand.
    lifecycle: { ready: (log: Parameters<TrackingTokensService['setLog']>[0]) => service.setLog(log), close: () => service.settled() },
  } as const satisfies Module;
}
