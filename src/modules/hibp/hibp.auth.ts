import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { type ApiKeysService, apiKeyOf, applyRateLimit } from '../identity/index.js';
import { rateLimited } from './hibp.errors.js';
import { HibpError } from './hibp.service.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How a Have I Been Pwned route is authenticated: `key` (hibp-api-key required), `open` (a key is used when sent), `range` (open only with THREATMON_HIBP_PUBLIC_RANGE). */
    hibp?: 'key' | 'open' | 'range';
  }
}

export type HibpDeps = Pick<AppDeps, 'config' | 'counters' | 'metrics'>;

/**
 * Who asks, as Have I Been Pwned's clients say it: a user agent, and an API key in `hibp-api-key`
 * (identity's keys, with its throttle) counted against its organization's plan; the open routes
 * take no key and are limited per address instead. Failures in Have I Been Pwned's words.
 */
export async function authenticateHibp(request: FastifyRequest, reply: FastifyReply, keys: ApiKeysService, deps: HibpDeps): Promise<void> {
  const access = request.routeOptions.config.hibp;
  if (!access) return;
  if (access !== 'range' && !request.headers['user-agent']) throw new HibpError(403, 'A user agent must be specified in the request (user-agent header).');
  const key = apiKeyOf(request);
  if (key !== undefined) {
    if (!key.startsWith('tm_')) throw new HibpError(401, 'Access denied due to improperly formed hibp-api-key.');
    try {
      request.principal = await keys.authenticate(key, request.ip);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) throw new HibpError(401, 'Access denied due to invalid hibp-api-key.');
      throw err;
    }
    await applyRateLimit(deps, request, reply);
  } else if (access === 'key' || (access === 'range' && !deps.config.hibpPublicRange)) {
    throw new HibpError(401, 'Access denied due to missing hibp-api-key.');
  } else {
    await limitByAddress(deps, request);
  }
}

/** Anonymous callers of the open routes: the lowest plan's limit per address. */
async function limitByAddress(deps: HibpDeps, request: FastifyRequest): Promise<void> {
  if (!deps.config.rateLimits) return;
  const limit = Math.min(...Object.values(deps.config.planLimits));
  const hit = await deps.counters.hit(`rl:hibp:${request.ip}`, limit, 60_000, { countAhead: true });
  if (!hit.allowed) {
    deps.metrics.rateLimited.inc({ kind: 'plan' });
    const reset = Math.max(1, Math.ceil(hit.resetMs / 1000));
    throw rateLimited(reset);
  }
}
