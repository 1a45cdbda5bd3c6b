import type { AppDeps } from '../../deps.js';
import { bind } from '../../http/routes.js';
import type { ApiKeysService } from '../identity/index.js';
import type { LeaksService } from '../leaks/index.js';
import type { MonitoringService } from '../monitoring/index.js';
import { HIBP_PREFIX, hibpRoutes } from './hibp.routes.js';
import { HibpService } from './hibp.service.js';
import type { Module } from '../module-parts.js';

/** What the Have I Been Pwned surface is made from. */
export type HibpModuleDeps = Pick<AppDeps, 'config' | 'counters' | 'metrics'> & {
  keys: ApiKeysService;
  leaks: LeaksService;
  monitoring: MonitoringService;
};

/**
 * Have I Been Pwned's v3 API over threatmon's corpus, at its own paths outside /api/v1, for the
 * tools that speak it: authenticated by API key (hibp-api-key), its errors in its shapes.
 */
export function createHibpModule(ctx: HibpModuleDeps) {
  const service = new HibpService(ctx.leaks, ctx.monitoring, ctx.config);
  const { keys, leaks: _leaks, monitoring: _monitoring, ...deps } = ctx;
  return { name: 'hibp', service, prefix: HIBP_PREFIX, bareNotFound: [`${HIBP_PREFIX}/`], siteRoutes: [bind(hibpRoutes, { hibp: service, keys, deps, prefix: HIBP_PREFIX })] } as const satisfies Module;
}
