import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type TSchema, Type } from 'typebox';
import { ProblemSchema } from './errors.js';
import { FAVICON_SVG, faviconIco } from './favicon.js';
import { documentObject, documentRoute } from './openapi.js';

const require = createRequire(import.meta.url);
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const REDOC_BUNDLE = path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');

export const API_DESCRIPTION = `
threatmon watches leaked data for your domains, e-mail addresses and keywords, searches that leaked
data, runs incidents with their indicators of compromise, and plants tracking tokens whose every
exposure is recorded.

**Conventions.** Every path ends with \`/\` (without it: 308 to the slashed path). Bodies are JSON;
unknown body fields are refused (400), read-only fields sent in a body are ignored. Every error is
\`application/problem+json\` (RFC 9457) with \`code\` and \`detail\`, plus \`errors[]\` for validation.
Lists are paginated (\`page\`, \`page_size\` 1-500, default 50) in the envelope
\`{count, next, previous, results}\`, filter by field-named query parameters (comma lists are OR),
and sort with \`ordering\` (\`-\` for descending; default \`-created_at\`, ties broken by id).
Single records carry a strong \`ETag\`; \`If-None-Match\` answers 304 and \`If-Match\` on PATCH answers 412 on mismatch.
A path that exists without the method used is 405 with an \`Allow\` header; a path without its slash is
308 with a \`Location\` header. Every response carries \`X-Request-Id\`.
Text may not hold the null character (U+0000) anywhere, in a body (values and keys) or a query
parameter: 400 \`null characters are not allowed\` for that field, on every database alike (in leak
ingestion, only the record holding it is rejected). A path that is not valid percent-encoding, or
whose id is longer than 500 characters, is 404 like any unknown path.

**Authentication.** \`POST /api/v1/auth/token/\` with \`{username, password}\` returns a JWT pair; send
\`Authorization: Bearer <access>\` on every other request. Access tokens live 15 minutes, refresh tokens 7 days.
A user deactivated, demoted or removed through the API is refused (401) or limited (403) from the
next request on, whichever server answers it. An API key (\`tm_...\`, as a bearer or \`X-API-Key\`) acts for
its creator, never above the creator's role, and cannot manage keys or change a password (403).
Failed logins and failed API key authentications are throttled per address (429 with \`Retry-After\`).

**Bodies** may not stall: a body that stops arriving for 30 s (\`THREATMON_BODY_TIMEOUT_MS\`) is 408.

**Rate limits.** Counted per organization over a fixed 60 s window (starter 100, professional 500,
enterprise 2000 requests per minute), reported in \`RateLimit-*\` headers; beyond it: 429 with \`Retry-After\`.
The limit is never exceeded; with several server processes, \`RateLimit-Remaining\` can be lower than
the requests actually left by what the other processes have reserved and not used yet.
`.trim();

/** OpenAPI 3.1 at /api/schema/, Swagger UI at /api/docs/, ReDoc at /api/redoc/: all served locally. */
/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, its delivery's body (the envelope
 * around `data`, as the webhooks module sends it), so that a generator can type a receiver.
 */
function webhooksOf(events: Readonly<Record<string, TSchema>>) {
  const entries = Object.entries({ ...events, ping: Type.Object({ webhook: Type.String({ format: 'uuid', description: 'The webhook pinged.' }) }, { description: 'POST /webhooks/<id>/test/.' }) });
  return Object.fromEntries(
    entries.map(([type, data]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\W/g, '_')}`,
          tags: ['webhooks'],
          security: [],
          summary: `The ${type} event`,
          description:
            'POSTed to each active webhook subscribed to it (ping: to the one tested), signed as Standard Webhooks sign: headers `webhook-id` (the event id), `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` under the webhook\'s secret).',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: Type.Object(
                  { id: Type.String({ format: 'uuid', description: 'The event id (also `webhook-id`).' }), type: Type.Literal(type), timestamp: Type.String({ format: 'date-time' }), data },
                  { title: `${type} event` },
                ),
              },
            },
          },
          responses: { '200': { description: 'Received: any 2xx ends the delivery; another answer, or none within 10 s, is retried on the backoff schedule.' } },
        },
      },
    ]),
  );
}

export const docs = fp(
  async (app: FastifyInstance, options: { events?: Readonly<Record<string, TSchema>> }) => {
    app.addSchema(ProblemSchema);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'threatmon API', version: '1.0.0', description: API_DESCRIPTION, license: { name: 'UNLICENSED (proprietary, as package.json says)', identifier: 'LicenseRef-threatmon-proprietary' }, contact: { name: 'threatmon maintainers' } },
        servers: [{ url: '/', description: 'This server' }],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /api/v1/auth/token/, or an API key (`Bearer tm_...`).' },
            apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key from POST /api/v1/auth/api-keys/ (`tm_...`).' },
            hibpApiKey: { type: 'apiKey', in: 'header', name: 'hibp-api-key', description: 'An API key (`tm_...`), as Have I Been Pwned\'s clients send theirs.' },
            basicAuth: { type: 'http', scheme: 'basic', description: 'TAXII only: a username with its password, or any username with an API key (`tm_...`) as the password.' },
          },
        },
        webhooks: webhooksOf(options.events ?? {}),
        tags: [
          { name: 'auth', description: 'Tokens and the current user' },
          { name: 'organizations', description: 'Your organization, its users and usage' },
          { name: 'audit', description: 'Audit log of every write' },
          { name: 'leaks', description: 'The leak corpus: search, sources, ingestion, saved searches, statistics, pwned-passwords range' },
          { name: 'incidents', description: 'Incidents, their IOCs, timeline, comments and exports' },
          { name: 'monitoring', description: 'Monitors: what your organization watches the leak corpus for' },
          { name: 'tracking-tokens', description: 'Canaries: tokens planted where only a leak would reach, each exposure recorded' },
          { name: 'webhooks', description: 'Webhooks: events pushed to your endpoints, signed (Standard Webhooks)' },
          { name: 'notifications', description: 'Notification channels: e-mail, Slack, Teams, Mattermost and Discord, with digests instead of drops' },
          { name: 'feeds', description: 'Intelligence in: STIX 2.1 bundles and indicator lists pulled on a schedule' },
          { name: 'indicators', description: 'The indicators feeds bring, deduplicated by type and value' },
          { name: 'hibp', description: 'Have I Been Pwned v3 API over this corpus, at its own paths (/hibp/api/v3, /hibp/pwnedpasswords) for its clients' },
          { name: 'taxii', description: 'TAXII 2.1 (read-only): the indicators and exposures collections of your organization, for the tools that pull intelligence' },
          { name: 'service', description: 'Health and metrics' },
        ],
      },
      refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
      transform: documentRoute as never,
      transformObject: documentObject as never,
    });

    app.get(
      '/api/schema/',
      {
        schema: {
          tags: ['service'],
          summary: 'This OpenAPI 3.1 document',
          description: 'Generated from the schemas that validate requests and serialise responses.',
          response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document.' }) },
        },
      },
      async () => app.swagger(),
    );

    // Swagger UI answers its bare prefix itself: it redirects instead, as every path without its slash does.
    app.addHook('onRoute', (route) => {
      if (route.url !== '/api/docs') return;
      const page = route.handler;
      // Both forms of the prefix may share this route's options: the slashed one still gets the page.
      route.handler = function redirectToSlash(request, reply) {
        const rest = request.url.slice('/api/docs'.length);
        if (rest.startsWith('/')) return page.call(this, request, reply);
        return reply.redirect(`/api/docs/${rest}`, 308);
      };
    });

    await app.register(swaggerUi, {
      routePrefix: '/api/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true, url: '/api/schema/' },
      staticCSP: true,
      transformStaticCSP: () =>
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    });

    const redocCsp =
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; worker-src 'self' blob:; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'";
    app.get('/api/redoc/', { schema: { tags: ['service'], summary: 'ReDoc', description: 'This API as a reference page, served locally (no CDN).', produces: ['text/html'], response: { 200: Type.String({ description: 'The page.' }) } } }, async (_req, reply) => {
      reply.header('content-security-policy', redocCsp).type('text/html; charset=utf-8');
      return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>threatmon API - ReDoc</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="/favicon.svg" type="image/svg+xml"></head>
<body><redoc spec-url="/api/schema/"></redoc><script src="/api/redoc/redoc.standalone.js"></script></body></html>`;
    });
    let bundle: Buffer | undefined;
    app.get('/api/redoc/redoc.standalone.js', { schema: { hide: true } }, async (_req, reply) => {
      // ReDoc's sidebar footer shows Redocly's logo from their CDN, always: ours instead, from here.
      bundle ??= Buffer.from((await readFile(REDOC_BUNDLE, 'utf8')).replaceAll(REDOC_CDN_LOGO, '/favicon.svg'));
      reply.header('cache-control', 'public, max-age=86400').type('application/javascript; charset=utf-8');
      return bundle;
    });
  },
  { name: 'docs' },
);

/** The icon browsers ask every site for, and the one the pages name. */
export const favicon = fp(
  async (app: FastifyInstance) => {
    const ico = faviconIco();
    const svg = Buffer.from(FAVICON_SVG);
    app.get('/favicon.ico', { schema: { hide: true } }, async (_req, reply) => reply.header('cache-control', 'public, max-age=86400').type('image/x-icon').send(ico));
    app.get('/favicon.svg', { schema: { hide: true } }, async (_req, reply) => reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(svg));
  },
  { name: 'favicon' },
);
