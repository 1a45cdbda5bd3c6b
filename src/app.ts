import { createHash } from 'node:crypto';
import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import type { Config } from './config.js';
import { currentSchema } from './db/migrator.js';
import { prepareDatabase, prepareShards } from './db/prepare.js';
import { notify, PgListener } from './db/pg-listener.js';
import { type AppDeps, createDeps, type DepsOverrides } from './deps.js';
import { answerServerEvents, clientErrorHandler, conventions, type ForeignErrors, frameworkErrors, genReqId } from './http/conventions.js';
import { redactUrl, SECRET_HEADERS } from './http/redact.js';
import { SECURITY_HEADERS } from './http/security-headers.js';
import { consoleRoutes } from './http/console.js';
import { docs, favicon } from './http/docs.js';
import { serviceRoutes } from './http/service.js';
import { type AuditLog, createAuditModule } from './modules/audit/index.js';
import { createEventsModule, type Outbox } from './modules/events/index.js';
import { createFeedsModule, type FeedsService } from './modules/feeds/index.js';
import { leakCorpus } from './modules/feed-corpus.js';
import { type AppHookRegistry, createHooks } from './modules/hooks.js';
import { type AuthService, createIdentityModule, type PasswordPolicy, principalOf, type TokenService, type UsersService } from './modules/identity/index.js';
import { createHibpModule } from './modules/hibp/index.js';
import { createTaxiiModule, type TaxiiService } from './modules/taxii/index.js';
import { createNotificationsModule, type NotificationsService } from './modules/notifications/index.js';
import { createIncidentsModule, type IncidentsService } from './modules/incidents/index.js';
import { createLeaksModule, type LeaksService } from './modules/leaks/index.js';
import { createMonitoringModule, type MonitoringService, type ScanOptions } from './modules/monitoring/index.js';
import { createOrganizationsModule, type OrganizationsService } from './modules/organizations/index.js';
import { createTrackingTokensModule, type TrackingTokensService } from './modules/tracking-tokens/index.js';
import { createWebhooksModule, type WebhooksService } from './modules/webhooks/index.js';
import type { TSchema } from 'typebox';
import type { ModuleParts } from './modules/module-parts.js';
export const API_PREFIX = '/api/v1';
export const BODY_LIMIT = 1024 * 1024;

/** The services the app is made of, for the CLI and tests to use without HTTP. */
export interface Services {
  audit: AuditLog;
  tokens: TokenService;
  passwordPolicy: PasswordPolicy;
  users: UsersService;
  orgs: OrganizationsService;
  auth: AuthService;
  incidents: IncidentsService;
  leaks: LeaksService;
  monitoring: MonitoringService;
  trackingTokens: TrackingTokensService;
  webhooks: WebhooksService;
  taxii: TaxiiService;
  notifications: NotificationsService;
  feeds: FeedsService;
  /** Domain events, written in the transaction of their change (the webhooks' outbox). */
  outbox: Outbox;
  /** The seams between modules (see modules/hooks.ts). */
  hooks: AppHookRegistry;
}

/**
 * The modules, each made from exactly what it declares it takes, in the order they need one
 * another; each subscribes to the others' hooks in its own index.ts.
 */
export function createModules(deps: AppDeps, options: { scans?: ScanOptions; bulkLoadWatchMs?: number } = {}) {
  const { database, clock, newId, config, counters, metrics, principals } = deps;
  const hooks = createHooks();
  const audit = createAuditModule({ database, clock, newId, caller: principalOf });
  const events = createEventsModule({ clock, newId, hooks });
  const webhooks = createWebhooksModule({ database, clock, newId, config, metrics, audit: audit.log, hooks });
  const identity = createIdentityModule({ database, clock, newId, config, counters, metrics, principals, audit: audit.log, hooks });
  const organizations = createOrganizationsModule({ database, clock, newId, config, counters, principals, audit: audit.log, hooks, users: identity.users, auth: identity.auth });
  const incidents = createIncidentsModule({ database, clock, newId, audit: audit.log, hooks, outbox: events.outbox });
  const leaks = createLeaksModule({ database, clock, newId, config, metrics, audit: audit.log, hooks, bulkLoadWatchMs: options.bulkLoadWatchMs });
  const monitoring = createMonitoringModule({ database, clock, newId, audit: audit.log, hooks, incidents: incidents.service, outbox: events.outbox, scans: options.scans });
  const trackingTokens = createTrackingTokensModule({ database, clock, newId, counters, config, audit: audit.log, hooks, outbox: events.outbox, users: identity.users });
  const hibp = createHibpModule({ config, counters, metrics, keys: identity.keys, leaks: leaks.service, monitoring: monitoring.service });
  const notifications = createNotificationsModule({ database, clock, newId, config, metrics, audit: audit.log, hooks });
  const feeds = createFeedsModule({ database, clock, newId, config, audit: audit.log, hooks, outbox: events.outbox, corpus: leakCorpus(leaks.service, monitoring.service) });
  const taxii = createTaxiiModule({ database, clock, hooks, orgs: organizations.service, authenticate: identity.authenticateWithBasic, bodyLimit: BODY_LIMIT });
  const services: Services = {
    audit: audit.log,
    tokens: identity.tokens,
    passwordPolicy: identity.passwordPolicy,
    users: identity.users,
    orgs: organizations.service,
    auth: identity.auth,
    incidents: incidents.service,
    leaks: leaks.service,
    monitoring: monitoring.service,
    trackingTokens: trackingTokens.service,
    webhooks: webhooks.service,
    taxii: taxii.service,
    notifications: notifications.service,
    feeds: feeds.service,
    outbox: events.outbox,
    hooks,
  };
  // Every module, in the order their routes register: each list below is gathered from all of them.
  const parts: readonly ModuleParts[] = [identity, organizations, audit, incidents, leaks, monitoring, trackingTokens, webhooks, notifications, feeds, hibp, taxii, events];
  return {
    services,
    jobs: parts.flatMap((m) => m.jobs ?? []),
    lifecycles: parts.flatMap((m) => (m.lifecycle ? [m.lifecycle] : [])),
    // Behind authentication (routes), without it (publicRoutes), and outside /api/v1 (siteRoutes:
    // tracking-token triggers, the Have I Been Pwned surface and TAXII 2.1, each with its own rules).
    secured: parts.flatMap((m) => m.routes ?? []),
    publicRoutes: parts.flatMap((m) => m.publicRoutes ?? []),
    site: parts.flatMap((m) => m.siteRoutes ?? []),
    // What each event type carries, for the OpenAPI document's webhooks section.
    eventSchemas: Object.assign({}, ...parts.map((m) => m.events ?? {})) as Record<string, TSchema>,
    bareNotFound: parts.flatMap((m) => m.bareNotFound ?? []),
    foreignErrors: parts.flatMap((m) => m.foreignErrors ?? []),
    secretPaths: parts.flatMap((m) => m.secretPaths ?? []),
    authenticate: identity.authenticate,
  };
}

export function createServices(deps: AppDeps): Services {
  return createModules(deps).services;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    services: Services;
  }
}

export interface BuildOptions extends DepsOverrides {
  /** Pino logger settings; tests pass false. */
  logger?: boolean | object;
  /** Where the default logger writes (standard output unless given): tests read what is logged. */
  logStream?: DestinationStream;
  /** Run migrations before serving (default true). */
  migrate?: boolean;
  /**
   * Run the modules' background jobs (scans, deliveries) from when the app is ready until it closes:
   * `serve` sets it in one process per node; tests run jobs themselves unless they set it.
   */
  jobs?: boolean;
  /** How scans read the corpus (chunk size, lease): tests take small chunks. */
  scans?: ScanOptions;
  /** How often the jobs look for an abandoned bulk load (SQLite; default 30 s). */
  bulkLoadWatchMs?: number;
}

/**
 * The NOTIFY channel on which a committed change to users or organizations is announced to every
 * node: one per schema, since another schema of the database holds other users (at most 63 bytes).
 */
async function principalsChannel(deps: AppDeps): Promise<string> {
  const schema = await currentSchema(deps.database.db);
  const name = `threatmon_principals ${schema}`;
  return Buffer.byteLength(name) <= 63 ? name : `threatmon_principals ${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/**
 * PostgreSQL: every API node, on any machine, forgets its remembered principals when any of them
 * commits a change to users or organizations. While the listening connection is down, nothing is
 * remembered (a change announced meanwhile would be missed).
 */
async function shareChangesOverPostgres(app: FastifyInstance, deps: AppDeps): Promise<void> {
  deps.principals.setTrusted(false);
  const channel = await principalsChannel(deps);
  const listener = new PgListener(deps.config.databaseUrl, channel, {
    notify: () => deps.principals.clear(),
    up: () => deps.principals.setTrusted(true),
    down: (err) => {
      deps.principals.setTrusted(false);
      app.log.warn({ err }, 'principal changes: lost the PostgreSQL LISTEN connection; reconnecting, principals are read from the database meanwhile');
    },
  });
  deps.principals.addPeer(async () => {
    await notify(deps.database.db, channel);
  });
  app.addHook('onClose', () => listener.close());
  // Start remembering from the first request when the database answers; never hold start-up for it.
  await Promise.race([listener.ready, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const logger =
    options.logger ??
    ({
      level: config.logLevel,
      // Never log a secret: credentials travel in these headers.
      redact: { paths: [...SECRET_HEADERS.map((h) => `req.headers["${h}"]`), 'res.headers["set-cookie"]'], censor: '[redacted]' },
      // Standard output written asynchronously: lines logged while a write is under way go out
      // together in the next one, instead of one write per line on the request's path. Pino
      // flushes what is left when the process exits.
      stream: options.logStream ?? pino.destination({ dest: 1, sync: false }),
    } as const);

  const bareNotFound: string[] = [];
  const foreignErrors: ForeignErrors[] = [];
  const app = Fastify({
    logger,
    genReqId,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    // A request without Host reaches the conventions, which answer it as problem+json (Node: a bare 400).
    http: { requireHostHeader: false },
    return503OnClosing: true,
    // One access line per request (below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 500 },
    // Prefixes known once the modules exist (below), read when a request comes.
    frameworkErrors: (err, request, reply) => frameworkErrors(err, request, reply, bareNotFound, foreignErrors),
    // Requests Node's parser refuses (not HTTP, oversized headers) are answered as problem+json too.
    clientErrorHandler,
    ajv: {
      customOptions: {
        // Unknown body fields must fail (400), not vanish.
        removeAdditional: false,
        allErrors: true,
        // Scalars only ("5" -> 5 as DRF does); a string is never silently turned into a list.
        coerceTypes: true,
        formats: {
          'date-or-date-time': /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/,
        },
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const deps = createDeps(config, {
    ...options,
    onRedisError: options.onRedisError ?? ((err) => app.log.warn({ err }, 'redis unavailable: rate limits fail open')),
  });
  if (options.migrate !== false) await prepareDatabase(deps.database);
  else await prepareShards(deps.database);
  const modules = createModules(deps, { scans: options.scans, bulkLoadWatchMs: options.bulkLoadWatchMs });
  const { services } = modules;
  bareNotFound.push(...modules.bareNotFound);
  foreignErrors.push(...modules.foreignErrors);
  app.decorate('deps', deps);
  app.decorate('services', services);
  app.decorateRequest('principal', null);
  // The access log: one line per request, with its id (reqId), the time taken and the organization.
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, url: redactUrl(request.url, modules.secretPaths), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, org: request.principal?.organization.id },
      'request',
    );
    done();
  });

  app.addHook('onClose', async () => {
    // Requests have all been answered: what they handed to modules (exposures to record) is finished first.
    await Promise.all(modules.lifecycles.map((l) => l.close()));
    await deps.counters.close();
    await deps.database.close();
  });
  app.addHook('onReady', async () => {
    for (const l of modules.lifecycles) l.ready(app.log);
    // Every API process routes its own reads: each checks the replicas (the first round before it serves).
    const replicas = deps.database.replicas;
    if (replicas) {
      replicas.log = app.log;
      await replicas.start();
    }
  });
  if (options.jobs) {
    app.addHook('onReady', async () => {
      for (const job of modules.jobs) job.start(app.log);
    });
    // Before onClose closes the database: each job ends the piece of work it is on.
    app.addHook('preClose', async () => {
      await Promise.all(modules.jobs.map((job) => job.stop()));
    });
  }
  if (config.databaseKind === 'postgres' && config.principalCacheMs > 0) await shareChangesOverPostgres(app, deps);

  // Into Fastify's own header record (written once, by writeHead): cheaper than setting each on the raw response.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });
  if (config.corsOrigins.length) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
      exposedHeaders: ['ETag', 'X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Retry-After'],
    });
  }
  // Read by the console's session (HttpOnly cookies); no other route looks at cookies.
  await app.register(cookie);
  await app.register(conventions, { bareNotFound, foreignErrors, bodyTimeoutMs: config.bodyTimeoutMs });
  answerServerEvents(app, modules.secretPaths);
  await app.register(docs, { events: modules.eventSchemas });
  await app.register(favicon);
  await app.register(consoleRoutes);
  await app.register(serviceRoutes, { deps });
  for (const r of modules.site) await r.register(app);

  await app.register(
    async (api) => {
      for (const r of modules.publicRoutes) await r.register(api);
      await api.register(async (secured) => {
        await modules.authenticate.register(secured);
        for (const r of modules.secured) await r.register(secured);
      });
    },
    { prefix: API_PREFIX },
  );

  return app;
}
