import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AppDeps } from '../../deps.js';
import { clientOf } from '../../http/client.js';
import { AppError, forbidden } from '../../http/errors.js';
import type { Hooks } from '../../runtime/hooks.js';
import type { PrincipalCache } from '../../runtime/principal-cache.js';
import type { AppHooks } from '../hooks.js';
import type { Role } from '../../domain/roles.js';
import { UsersRepository } from './users.repository.js';
import { framePrincipal, type Principal, requireRole } from './principal.js';
import { SessionsRepository } from './sessions.repository.js';
import { assertActive, LEEWAY_SECONDS, unauthenticated, type TokenService } from './tokens.js';
import { type ApiKeysService, isApiKey } from './api-keys.service.js';
import type { AuthService } from './auth.service.js';
import { consoleAccessToken } from './session.routes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Lowest role allowed (owner > admin > analyst > viewer); default viewer. */
    minRole?: Role;
    /** Platform operators only (`is_staff`). */
    staffOnly?: boolean;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const BASIC = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i;

/** What authentication reads: users and sessions, the principal cache, and the plan's rate limit. */
export type AuthDeps = Pick<AppDeps, 'database' | 'clock' | 'config' | 'counters' | 'metrics' | 'principals'>;

export interface AuthOptions {
  deps: AuthDeps;
  tokens: TokenService;
  keys: ApiKeysService;
  hooks: Hooks<Pick<AppHooks, 'auth.unknownBearer'>>;
  /** Also take HTTP Basic: a username with a password (checked as a login is) or with an API key. */
  basic?: Pick<AuthService, 'checkPassword'>;
}

/**
 * Authenticates every route registered in the scope it is applied to: bearer access token, user
 * still active (checked per request: read from the database, or from the principal cache, which
 * every committed change to users or organizations empties in every API process before it is
 * answered, so deactivation is immediate), role and staff checks declared in the route's config,
 * and the organization's plan rate limit.
 */
export const authenticate = fp(
  async (app: FastifyInstance, { deps, tokens, keys, hooks, basic }: AuthOptions) => {
    const { db } = deps.database;
    // Only this hook puts and gets principals, so it alone knows what they are.
    const principals = deps.principals as PrincipalCache<Principal>;
    const findPrincipal = new UsersRepository().principalLookup(db);
    const sessions = new SessionsRepository();

    app.addHook('onRoute', (route) => {
      route.schema ??= {};
      (route.schema as { security?: unknown }).security ??= [{ bearerAuth: [] }, { apiKey: [] }];
    });

    app.addHook('onRequest', async (request, reply) => {
      const credentials = basic ? BASIC.exec(request.headers.authorization ?? '')?.[1] : undefined;
      const key = credentials === undefined ? apiKeyOf(request) : undefined;
      if (credentials !== undefined) request.principal = await fromBasic(credentials, request);
      else request.principal = key === undefined ? await fromToken(request) : await keys.authenticate(key, request.ip);
      await applyRateLimit(deps, request, reply);
      const config = request.routeOptions.config;
      if (config.staffOnly && !request.principal.user.is_staff) throw forbidden('This action is for platform staff only.');
      if (config.minRole) requireRole(request.principal, config.minRole);
    });

    /** The principal of a bearer access token (a JWT). */
    async function fromToken(request: FastifyRequest): Promise<Principal> {
      const header = request.headers.authorization;
      const token = header ? BEARER.exec(header)?.[1] : consoleAccessToken(request);
      if (!header && !token) throw unauthenticated('not_authenticated', 'Authentication credentials were not provided.');
      if (!token) throw unauthenticated('token_invalid', 'Authorization header must be "Bearer <token>".');
      let claims: Awaited<ReturnType<TokenService['verify']>>;
      try {
        claims = await tokens.verify(token, 'access');
      } catch (err) {
        if (err instanceof AppError && err.code === 'token_invalid') {
          for (const hook of hooks.of('auth.unknownBearer')) await hook(token, clientOf(request));
        }
        throw err;
      }
      const principal = await userPrincipal(claims.sub);
      if (principal.endedSessions.has(claims.sid)) throw unauthenticated('token_invalid', 'Session has ended: log in again.');
      return principal;
    }

    /** A user's principal, from the cache or the database (with the sessions ended lately, for access tokens). */
    async function userPrincipal(userId: string): Promise<Principal> {
      let principal = principals.get(userId);
      if (!principal) {
        const mark = principals.mark();
        const row = await findPrincipal(userId);
        assertActive(row);
        const issuedSince = new Date(deps.clock().getTime() - (deps.config.accessTtlSeconds + LEEWAY_SECONDS) * 1000).toISOString();
        principal = framePrincipal(row, { endedSessions: new Set(await sessions.endedSince(db, row.id, issuedSince)) });
        principals.put(userId, principal, mark);
      }
      return principal;
    }

    /** HTTP Basic: an API key as the password acts alone (the username is not checked, as with Bearer); otherwise a login check. */
    async function fromBasic(encoded: string, request: FastifyRequest): Promise<Principal> {
      const decoded = Buffer.from(encoded, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw unauthenticated('not_authenticated', 'Basic credentials must be base64 of "username:password".');
      const password = decoded.slice(colon + 1);
      if (isApiKey(password)) return keys.authenticate(password, request.ip);
      return userPrincipal(await basic!.checkPassword(decoded.slice(0, colon), password, clientOf(request)));
    }
  },
  { name: 'authenticate' },
);

/** An API key, from `Authorization: Bearer tm_...`, or without Authorization from `X-API-Key` or `hibp-api-key`; undefined when none is sent. */
export function apiKeyOf(request: FastifyRequest): string | undefined {
  // Authorization says which credential it is; the key headers count only without it.
  const { authorization } = request.headers;
  if (authorization) {
    const bearer = BEARER.exec(authorization)?.[1];
    return bearer !== undefined && isApiKey(bearer) ? bearer : undefined;
  }
  const header = request.headers['x-api-key'] ?? request.headers['hibp-api-key'];
  return typeof header === 'string' ? header.trim() : undefined;
}

export async function applyRateLimit(deps: Pick<AuthDeps, 'config' | 'counters' | 'metrics'>, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!deps.config.rateLimits || !request.principal) return;
  const limit = deps.config.planLimits[request.principal.organization.plan];
  // Only the limit matters here, not each request's exact place in the count: workers may count ahead in blocks.
  const hit = await deps.counters.hit(`rl:${request.principal.organization.id}`, limit, 60_000, { countAhead: true });
  const reset = Math.max(1, Math.ceil(hit.resetMs / 1000));
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(Math.max(0, limit - hit.count)));
  reply.header('ratelimit-reset', String(reset));
  reply.header('ratelimit-policy', `${limit};w=60`);
  if (!hit.allowed) {
    deps.metrics.rateLimited.inc({ kind: 'plan' });
    throw new AppError('rate_limited', 429, `Request limit of ${limit} per minute reached; retry in ${reset} s.`, {
      headers: { 'retry-after': String(reset) },
      body: { retry_after: reset },
    });
  }
}
