import type { RouteOptions } from 'fastify';
import { type TSchema, Type } from 'typebox';

/**
 * What the OpenAPI document says beyond each route's own schema, so that it tells the truth about
 * what the server sends: the errors any request may get (500, 503, and 400/413/415 for a body),
 * every error as application/problem+json, and the response headers (X-Request-Id, RateLimit-*,
 * Retry-After, ETag).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The statuses whose answers carry the record's ETag (a single record read, created or changed). */
    etag?: readonly number[];
  }
}

const PROBLEM_TEXT: Record<number, string> = {
  400: 'Validation failed (`validation_error`, `malformed_json`, `invalid_query`).',
  413: 'Body too large (`payload_too_large`): 1 MiB, 64 MiB for leak ingestion.',
  404: 'Not found (`not_found`): no such record in your organization, or a path that is not valid percent-encoding.',
  415: 'Body is not JSON (`unsupported_media_type`).',
  500: 'Internal error (`internal_error`): logged with the request id, which the body quotes.',
  503: 'The database is unreachable, or (with Retry-After) the answer cannot be complete yet (`unavailable`).',
};

const REDIRECT_TEXT =
  'Permanent Redirect: the answer to this path without its trailing slash (never to this path itself), with Location set to this path and the same query string. Clients that follow redirects repeat the request here, method and body included.';

const header = (description: string, schema: TSchema = Type.String()) => ({ ...schema, description });

export const RESPONSE_HEADERS = {
  'x-request-id': header('The request id: an incoming X-Request-Id of 1-128 characters from [A-Za-z0-9._-] echoed, else a new UUID.'),
  'ratelimit-limit': header("Requests allowed per 60 s window by the organization's plan.", Type.Integer()),
  'ratelimit-remaining': header('Requests left in the current window.', Type.Integer()),
  'ratelimit-reset': header('Seconds until the window resets.', Type.Integer()),
  'ratelimit-policy': header('`<limit>;w=60`.'),
  'retry-after': header('Seconds to wait before trying again.', Type.Integer()),
  location: header('Where the resource is: this path with its trailing slash.'),
  etag: header('Strong validator of the record (`"<version>"`): send it back in If-None-Match (304) or If-Match (412 on mismatch).'),
} as const;

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'] as const;

const problemRef = (status: number) => Type.Ref('Problem', { description: PROBLEM_TEXT[status] ?? 'Error.' }) as TSchema;

type Responses = Record<string, TSchema & { headers?: Record<string, unknown> }>;

/**
 * @fastify/swagger's per-route transform: the route's responses completed with what the
 * conventions add. The route's own schema objects are copied, never changed: they also serialise.
 */
export function documentRoute({ schema: given = {}, url: routeUrl, route }: { schema: Record<string, unknown> | undefined; url: string; route: RouteOptions }) {
  if (given.hide) return { schema: given, url: routeUrl };
  // A route outside authentication says so (security: []), rather than leaving it to the reader.
  let schema: Record<string, unknown> = { ...given, security: given.security ?? [] };
  let url = routeUrl;
  // A wildcard (`/t/:key/*`) is documented as a parameter with a name: `{path}`, not `{*}`.
  if (url.endsWith('*')) {
    url = `${url.slice(0, -1)}:path`;
    const params = schema.params as { properties?: Record<string, TSchema> } | undefined;
    if (params?.properties?.['*']) {
      const { '*': rest, ...others } = params.properties;
      schema = { ...schema, params: Type.Object({ ...others, path: { ...rest, description: 'Any path below the key.' } as TSchema }) };
    }
  }
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const api = url.startsWith('/api/v1/');
  const authenticated = Array.isArray(schema.security) && schema.security.length > 0;
  const takesBody = Boolean(schema.body) || methods.some((m) => ['POST', 'PUT', 'PATCH'].includes(m));
  const etag = route.config?.etag ?? [];
  // A route without response schemas keeps the plain 200 the document would give it.
  const responses: Responses = { ...((schema.response as Responses | undefined) ?? { 200: Type.Any({ description: 'The answer.' }) }) };
  const add = (status: number) => {
    responses[status] ??= problemRef(status);
  };
  if (takesBody) [400, 413, 415].forEach(add);
  // A path parameter can name nothing, or not be valid percent-encoding: either is a 404.
  if (url.includes(':')) add(404);
  if (api) add(503);
  add(500);
  // The same path without its trailing slash answers 308 to this one (API.md section 0), before
  // any authentication: declared here, as the only place a document can say it.
  if (url.endsWith('/') && url !== '/') {
    responses[308] ??= Type.Null({ description: REDIRECT_TEXT }) as never;
  }
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status);
    const headers: Record<string, unknown> = { ...response.headers, 'x-request-id': RESPONSE_HEADERS['x-request-id'] };
    // The plan limiter answers for authenticated requests, after authentication (so not on a 401).
    if (authenticated && code !== 401 && code !== 308) for (const h of RATE_LIMIT_HEADERS) headers[h] = RESPONSE_HEADERS[h];
    if (code === 308) headers.location = RESPONSE_HEADERS.location;
    if (code === 429 || code === 503) headers['retry-after'] = RESPONSE_HEADERS['retry-after'];
    if (etag.includes(code) || (code === 304 && etag.length > 0)) headers.etag = RESPONSE_HEADERS.etag;
    responses[status] = { ...response, headers };
  }
  return { schema: { ...schema, response: responses }, url };
}

type Content = Record<string, { schema?: { $ref?: string } }>;
type Operation = { responses?: Record<string, { content?: Content; description?: string; headers?: Record<string, { required?: boolean }> }> } & Record<string, unknown>;
type OpenApi = { paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;

const html = (summary: string, description: string): Operation => ({
  tags: ['service'],
  security: [],
  summary,
  description,
  responses: {
    200: { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } as never } } },
    308: { description: REDIRECT_TEXT, headers: { location: { description: RESPONSE_HEADERS.location.description, required: true, schema: { type: 'string' } } as never } },
    500: { description: PROBLEM_TEXT[500] as string, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
  },
});

/** Path prefixes an operationId leaves out, or says in a word. */
const ID_PREFIXES: ReadonlyArray<[string, string]> = [
  ['/api/v1/', ''],
  ['/hibp/api/v3/', 'hibp_'],
  ['/hibp/', 'hibp_'],
];
const ID_VERBS: Record<string, string> = { post: 'create', put: 'update', patch: 'partial_update', delete: 'destroy', head: 'head' };

/** Whether a GET answers a list: a page envelope (`results`) or an array. */
function answersList(op: Operation): boolean {
  const schema = Object.values(op.responses?.['200']?.content ?? {})[0]?.schema as { type?: string; properties?: Record<string, unknown> } | undefined;
  return schema?.type === 'array' || Boolean(schema?.properties?.results);
}

/**
 * Gives every operation an operationId as Django REST Framework's generators name them: the path's
 * words (parameters left out) and the action, `incidents_list`, `incidents_create`,
 * `incidents_retrieve`, `incidents_partial_update`, `incidents_destroy`, `monitoring_alerts_escalate_create`.
 * Stable as long as the path and method are; where two would meet, the later takes its parameters' names.
 */
function nameOperations(paths: Record<string, Record<string, Operation>>): void {
  const taken = new Set<string>();
  for (const [path, operations] of Object.entries(paths)) {
    const [prefix, word] = ID_PREFIXES.find(([p]) => path.startsWith(p)) ?? ['/', ''];
    const segments = path.slice(prefix.length).split('/').filter(Boolean);
    const words = segments.filter((s) => !s.startsWith('{')).map((s) => s.replace(/[^A-Za-z0-9]+/g, '_'));
    const params = segments.filter((s) => s.startsWith('{')).map((s) => s.replace(/[^A-Za-z0-9]+/g, ''));
    const item = segments.at(-1)?.startsWith('{') ?? false;
    for (const [method, op] of Object.entries(operations)) {
      if (typeof op !== 'object' || op === null || op.operationId) continue;
      const verb = method === 'get' ? (!item && answersList(op) ? 'list' : 'retrieve') : (ID_VERBS[method] ?? method);
      let id = `${word}${[...words, verb].join('_')}`;
      if (taken.has(id)) id = `${id}_by_${params.join('_') || 'path'}`;
      taken.add(id);
      op.operationId = id;
    }
  }
}

/**
 * @fastify/swagger's whole-document transform: every problem is application/problem+json (whatever
 * the operation produces when it succeeds), and the pages outside the API are listed.
 */
export function documentObject({ openapiObject }: { openapiObject: Partial<OpenApi> }): Partial<OpenApi> {
  const paths = (openapiObject.paths ??= {});
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const problem = Object.values(response.content ?? {}).find((c) => c.schema?.$ref?.endsWith('/Problem'));
        if (Number(status) >= 400 && problem) response.content = { 'application/problem+json': problem };
        // Always sent with the responses that list them (rate-limit headers only while limits are on;
        // Retry-After with a 503 only when waiting helps, as while a bulk load is indexed).
        for (const name of ['x-request-id', 'etag', 'retry-after', 'location']) {
          const h = response.headers?.[name];
          if (h && !(name === 'retry-after' && status === '503')) h.required = true;
        }
      }
    }
  }
  paths['/api/docs/'] ??= { get: html('Swagger UI', 'This API, browsable and callable, served locally (no CDN). `/api/docs` without the slash is a 308.') };
  paths['/metrics'] ??= {
    get: {
      tags: ['service'],
      security: [],
      summary: 'Prometheus metrics',
      description: 'Prometheus text exposition: requests, latencies, rate-limit rejections, ingest counters. Served only when THREATMON_METRICS=true (this server: off, so it answers 404).',
      responses: {
        200: { description: 'Prometheus text format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } as never } } },
        404: { description: 'Metrics are off.', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
        500: { description: PROBLEM_TEXT[500] as string, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } },
      },
    },
  };
  // HEAD is served beside every GET; the tracking-token triggers record it, so there it is an operation.
  for (const path of ['/t/{key}/', '/t/{key}/{path}']) {
    const get = paths[path]?.get;
    if (get) (paths[path] as Record<string, Operation>).head = { ...get, summary: `${String(get.summary)} (HEAD: the same, without the body)` };
  }
  nameOperations(paths);
  return openapiObject;
}
