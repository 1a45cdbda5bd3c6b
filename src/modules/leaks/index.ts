import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { AuditLog } from '../audit/index.js';
import type { AppHookRegistry } from '../hooks.js';
import { leaksRoutes } from './leaks.routes.js';
import { LeaksService } from './leaks.service.js';

export { IngestCutOff, type IngestItem, type IngestReport, LeaksService } from './leaks.service.js';
export { NdjsonLines, recordResult } from './ndjson-lines.js';
export { RECORD_JSON, RECORD_JSON_PG_VALUE } from './leaks.repository.js';
export { LeakRecordSchema } from './leaks.schemas.js';

/**
 * The leak corpus: sources, ingestion (which publishes leaks.ingested), search, saved searches,
 * statistics and the pwned-passwords range. A new password found in the corpus is refused.
 */
export function createLeaksModule(ctx: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'metrics'> & { audit: AuditLog; hooks: AppHookRegistry }) {
  const service = new LeaksService(ctx, ctx.audit, ctx.hooks);
  ctx.hooks.on('auth.breachCheck', (password, db) => service.isBreached(password, db));
  return { name: 'leaks', service, routes: [bind(leaksRoutes, { leaks: service })] } as const;
}
