import { unreachableShard } from '../db/corpus-shards.js';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES as STATUS_TEXT } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { NUL_MESSAGE } from '../domain/ioc.js';
import { AppError, type ErrorCode, type FieldError, type Problem, problem, validation } from './errors.js';
import { redactUrl } from './redact.js';
import { SECURITY_HEADERS } from './security-headers.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the conventions, with its method. */
    routeTable: ReadonlyArray<{ method: string; url: string }>;
  }
  interface FastifyContextConfig {
    /**
     * The route's service validates its body itself, item by item (leak ingestion: a bad record
     * rejects only itself), so the body is not refused as a whole for a null character.
     */
    bodyCheckedByService?: boolean;
  }
}

/** Echo a well-formed incoming X-Request-Id, otherwise mint a UUID. */
export function genReqId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fieldOf(e: AjvError): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const child =
    e.keyword === 'required'
      ? String(e.params.missingProperty)
      : e.keyword === 'additionalProperties'
        ? String(e.params.additionalProperty)
        : '';
  return [base, child].filter(Boolean).join('.') || 'body';
}

function messageOf(e: AjvError): string {
  switch (e.keyword) {
    case 'required':
      return 'this field is required';
    case 'additionalProperties':
      return 'unknown field';
    case 'enum':
      return `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${String(e.params.allowedValue)}`;
    case 'format':
      return `must be a valid ${String(e.params.format)}`;
    case 'pattern':
      return 'has an invalid format';
    default:
      return e.message ?? 'is invalid';
  }
}

/** One entry per field, first message wins (anyOf branches would otherwise repeat a field). */
export function fieldErrors(errors: AjvError[]): FieldError[] {
  const seen = new Map<string, string>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const field = fieldOf(e);
    if (!seen.has(field)) seen.set(field, messageOf(e));
  }
  return [...seen].map(([field, message]) => ({ field, message }));
}

const FASTIFY_CODES: Record<string, [number, ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'Unsupported media type: send application/json.'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'Request body is too large.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'malformed_json', 'Malformed JSON: the body is empty.'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'malformed_json', 'Malformed JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'malformed_json', 'Content-Length does not match the body.'],
  FST_ERR_CTP_INVALID_TYPE: [415, 'unsupported_media_type', 'Invalid Content-Type header.'],
};

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

export function sendProblem(reply: FastifyReply, p: Problem, headers: Record<string, string> = {}) {
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.code(p.status).type('application/problem+json; charset=utf-8').send(p);
}

/** Seconds a client is asked to wait before asking again of a corpus shard that is down. */
const SHARD_RETRY_S = 30;

export function toProblem(err: FastifyError | AppError | Error, request: FastifyRequest): [Problem, Record<string, string>] {
  const id = String(request.id);
  if (err instanceof AppError) {
    const p = problem(err.status, err.code, err.detail, id);
    if (err.extra.errors) p.errors = err.extra.errors;
    Object.assign(p, err.extra.body);
    return [p, err.extra.headers ?? {}];
  }
  const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    if (fe.validationContext === 'params') return [problem(404, 'not_found', 'Not found.', id), {}];
    const errors = fieldErrors(fe.validation);
    const code: ErrorCode = fe.validationContext === 'querystring' ? 'invalid_query' : 'validation_error';
    const p = problem(400, code, errors.map((e) => `${e.field}: ${e.message}`).join('; '), id);
    p.errors = errors;
    return [p, {}];
  }
  // A corpus shard down (THREATMON_CORPUS_SHARDS): what needs it answers 503 naming it; the rest answers.
  const shard = unreachableShard(err);
  if (shard) {
    const p = problem(503, 'unavailable', `The ${shard} cannot be reached: what needs its records answers again once it is back. Retry later.`, id);
    return [Object.assign(p, { unavailable: shard, retry_after: SHARD_RETRY_S }), { 'retry-after': String(SHARD_RETRY_S) }];
  }
  const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known) return [problem(known[0], known[1], known[2], id), {}];
  if (err instanceof SyntaxError && fe.statusCode === 400) return [problem(400, 'malformed_json', 'Malformed JSON.', id), {}];
  const status = fe.statusCode;
  if (status && status >= 400 && status < 500) {
    // Fastify's own client errors: their messages are written for clients and carry no internals.
    return [problem(status, STATUS_CODES[status] ?? 'validation_error', fe.message, id), {}];
  }
  return [problem(500, 'internal_error', 'Internal server error.', id), {}];
}

/**
 * Fastify's errors from before routing: a path that is not valid percent-encoding (FST_ERR_BAD_URL)
 * or whose parameter is longer than the router takes (FST_ERR_MAX_PARAM_LENGTH, 500 characters,
 * far past any id). Neither path can name a resource: 404 problem+json, as for any unknown path,
 * instead of Fastify's own JSON (400 and 414); under a `bareNotFound` prefix, a bare 404 (see conventions).
 */
export function frameworkErrors(_err: FastifyError, request: FastifyRequest, reply: FastifyReply, bareNotFound: readonly string[] = [], foreignErrors: readonly ForeignErrors[] = []) {
  if (bareNotFound.some((prefix) => request.url.startsWith(prefix))) return reply.header('x-request-id', request.id).code(404).send();
  const foreign = foreignErrors.find((f) => request.url.startsWith(f.prefix));
  if (foreign) return foreign.send(reply.header('x-request-id', request.id), 404, 'Not found.');
  return sendProblem(reply.header('x-request-id', request.id), problem(404, 'not_found', 'Not found.', String(request.id)));
}

/** A problem+json answer written straight to a socket or response, outside Fastify: its id, head fields and body. */
function rawProblem(status: number, code: ErrorCode, detail: string, extraHeaders: Record<string, string> = {}) {
  const id = randomUUID();
  const body = JSON.stringify(problem(status, code, detail, id));
  const headers: Record<string, string> = { ...SECURITY_HEADERS, 'x-request-id': id, 'content-type': 'application/problem+json', 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...extraHeaders };
  return { id, headers, body };
}

/** Writes a problem+json answer on a socket Fastify never saw a request on, then closes it. */
function answerSocket(log: FastifyInstance['log'], socket: Duplex, status: number, code: ErrorCode, detail: string, logged: Record<string, unknown>, extraHeaders?: Record<string, string>): void {
  const { id, headers, body } = rawProblem(status, code, detail, extraHeaders);
  log.info({ reqId: id, status, ...logged }, 'malformed request');
  if (socket.writable) {
    const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\n${head}\r\n${body}`);
  }
  socket.destroy();
}

/**
 * A request Node's HTTP parser refused before Fastify saw it (a space or a raw non-ASCII byte in
 * the target, headers past the size limit, a request not sent in time): answered as problem+json
 * with the security headers and a request id, like every other answer, then the connection closed.
 * Only the error's code is logged: the parser's error holds the raw bytes, credentials included.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, detail]: [number, ErrorCode, string] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request headers are larger than the server accepts (16 KiB).']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time.']
        : [400, 'malformed_request', 'The request is not valid HTTP/1.1 (for example a space or a raw non-ASCII byte in the URL: percent-encode it).'];
  answerSocket(this.log, socket, status, code, detail, { error: err.code ?? 'unknown' });
}

/**
 * What Node's HTTP server answers itself, bare, unless told otherwise: CONNECT (this is no proxy:
 * 405) and an Expect other than 100-continue (417). Both as problem+json, then the connection closed.
 */
export function answerServerEvents(app: FastifyInstance, secretPaths: readonly string[] = []): void {
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    answerSocket(app.log, socket, 405, 'method_not_allowed', 'Method "CONNECT" not allowed: this server is not a proxy.', { method: 'CONNECT' }, { allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' });
  });
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const { id, headers, body } = rawProblem(417, 'expectation_failed', 'Only "Expect: 100-continue" is supported.');
    app.log.info({ reqId: id, status: 417, method: req.method, url: redactUrl(req.url ?? '', secretPaths) }, 'request');
    res.writeHead(417, headers).end(body);
  });
}

/**
 * Watches a request's body while it arrives: when no byte of it comes for `ms`, the reader of the
 * body fails with 408 (answered as problem+json, the connection closed). The socket's idle timer
 * is used (through the request, whose 'timeout' listener keeps Node from destroying the socket):
 * Node's parser refreshes it as it reads, where a 'data' listener would take the body from its reader.
 */
function watchBody(request: FastifyRequest, reply: FastifyReply, ms: number): void {
  const raw = request.raw;
  // An injected request (tests) has no real socket, and its body is there whole.
  if (typeof (raw.socket as typeof raw.socket | undefined)?.setTimeout !== 'function') return;
  const socket = raw.socket;
  const stop = () => {
    socket.setTimeout(0);
    raw.off('timeout', expire);
    raw.off('end', stop);
    reply.raw.off('finish', stop);
  };
  function expire() {
    stop();
    const err = new AppError('request_timeout', 408, `The request body was not received in time: no byte of it came for ${ms / 1000} s.`, { headers: { connection: 'close' } });
    // Something reads the body (the JSON parser, a streaming route): it fails with the 408.
    if (raw.listenerCount('error') > 0) {
      raw.emit('error', err);
      return;
    }
    if (!reply.sent) {
      const [p, headers] = toProblem(err, request);
      void sendProblem(reply, p, headers);
      return;
    }
    socket.destroy();
  }
  // The request's own timeout event: with a listener there, Node leaves the socket to it.
  raw.setTimeout(ms, expire);
  raw.once('end', stop);
  reply.raw.once('finish', stop);
}

/**
 * Where `value` (a parsed JSON body or query string) holds U+0000 in a string or a key: its dotted
 * path ('' for `value` itself), else null (see NUL_MESSAGE). Only arrays and plain objects are
 * walked: a streamed body is not. The walk keeps its own stack: a body's depth is the client's choice.
 */
export function nulField(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  const at = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return path;
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    // Pushed last first, so the first field that holds one is the one named, as a recursive walk would.
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], at(path, i)]);
      continue;
    }
    const proto = Object.getPrototypeOf(item) as unknown;
    if (proto !== Object.prototype && proto !== null) continue;
    const entries = Object.entries(item);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      if (key.includes('\u0000')) {
        // A key is checked as soon as its object is reached: named before anything nested deeper.
        stack.push([key, at(path, key)]);
      } else {
        stack.push([child, at(path, key)]);
      }
    }
  }
  return null;
}

/**
 * The conventions of API.md section 0 that every route shares: request ids, problem+json for every
 * error (Fastify's own included), 308 to the slashed path, 405 with Allow, and read-only body fields ignored.
 */
export const conventions = fp(
  async (app: FastifyInstance, options: { bareNotFound?: readonly string[]; foreignErrors?: readonly ForeignErrors[]; bodyTimeoutMs?: number }) => {
    // A second router that mirrors Fastify's, to tell "no such path" from "wrong method" and
    // "missing trailing slash" from the not-found handler.
    const mirror = FindMyWay({ ignoreTrailingSlash: false });
    const readOnlyByRoute = new Map<string, Set<string>>();
    // Every route, as registered: what a test walks to hold each one to a rule (401 without a token).
    const routeTable: Array<{ method: string; url: string }> = [];
    app.decorate('routeTable', routeTable);
    // Bodies are JSON only (a module that takes NDJSON adds its parser): anything else is 415.
    app.removeContentTypeParser('text/plain');
    // JSON bodies must be UTF-8 (RFC 8259): a byte that is not would otherwise become U+FFFD and be
    // stored as such. Fastify's own parser does the rest (empty body, __proto__ and constructor keys).
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    // Any other media type is 415, but on an unknown path, which is a 404 whatever it is sent.
    app.addContentTypeParser('*', (request, _payload, done) => {
      if (request.is404) return done(null, undefined);
      return done(new AppError('unsupported_media_type', 415, 'Unsupported media type: send application/json.'), undefined);
    });
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      // An unknown path is a 404 whatever its body holds.
      if (request.is404) return done(null, undefined);
      const bytes = body as Buffer;
      if (!isUtf8(bytes)) return done(new AppError('malformed_json', 400, 'Malformed JSON: the body is not valid UTF-8.'), undefined);
      return parseJson(request, bytes.toString('utf8'), done);
    });

    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        routeTable.push({ method, url: route.url });
        try {
          mirror.on(method as HTTPMethod, route.url, () => {});
        } catch {
          // Already there (HEAD twins, swagger aliases): nothing to mirror.
        }
      }
      // Fields a resource returns but does not accept are read-only: ignored when sent, not 400.
      const body = route.schema?.body as { properties?: Record<string, unknown> } | undefined;
      const response = route.schema?.response as Record<string, { properties?: Record<string, unknown> }> | undefined;
      if (body?.properties && response) {
        const ok = response['200'] ?? response['201'];
        if (ok?.properties) {
          const readOnly = Object.keys(ok.properties).filter((k) => !(k in (body.properties ?? {})));
          if (readOnly.length) {
            for (const method of methods) readOnlyByRoute.set(`${method} ${route.url}`, new Set(readOnly));
          }
        }
      }
    });

    // Hooks of every request take a callback: an async one costs a promise per request.
    const bodyTimeoutMs = options.bodyTimeoutMs ?? 0;
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      const raw = request.raw;
      // Node takes a request without Host (the server does not require it, so that this answers)
      // and keeps the first of two: HTTP/1.1 wants exactly one (RFC 9112 section 3.2).
      const hosts = raw.headers.host === undefined ? 0 : countHeader(raw.rawHeaders, 'host');
      if (hosts > 1 || (hosts === 0 && raw.httpVersion === '1.1')) {
        reply.header('connection', 'close');
        return done(new AppError('malformed_request', 400, hosts === 0 ? 'The request has no Host header (HTTP/1.1 requires one).' : 'The request has more than one Host header.'));
      }
      if (bodyTimeoutMs > 0 && !raw.complete && (raw.headers['transfer-encoding'] !== undefined || Number(raw.headers['content-length'] ?? 0) > 0)) watchBody(request, reply, bodyTimeoutMs);
      done();
    });

    app.addHook('preValidation', (request, _reply, done) => {
      try {
        checkRequest(request);
      } catch (err) {
        return done(err as Error);
      }
      done();
    });

    function checkRequest(request: FastifyRequest) {
      if (request.is404) return;
      const readOnly = readOnlyByRoute.get(`${request.method} ${request.routeOptions.url}`);
      const body = request.body;
      if (readOnly && body && typeof body === 'object' && !Array.isArray(body)) {
        for (const key of readOnly) delete (body as Record<string, unknown>)[key];
      }
      // The parsed query string is a plain record of strings (or lists of them) without Object's prototype.
      const inQuery = nulField({ ...(request.query as Record<string, unknown>) });
      if (inQuery !== null) throw new AppError('invalid_query', 400, `${inQuery}: ${NUL_MESSAGE}`, { errors: [{ field: inQuery, message: NUL_MESSAGE }] });
      if (!request.routeOptions.config.bodyCheckedByService) {
        const inBody = nulField(body);
        if (inBody !== null) throw validation([{ field: inBody || 'body', message: NUL_MESSAGE }]);
      }
    }

    app.setErrorHandler((err: FastifyError, request, reply) => {
      const [p, headers] = toProblem(err, request);
      if (p.status >= 500) request.log.error({ err, request_id: request.id }, 'request failed');
      return sendProblem(reply, p, headers);
    });

    app.setNotFoundHandler((request, reply) => {
      const [path, query] = splitUrl(request.url);
      // Surfaces that speak another API's protocol (Have I Been Pwned's): its bare 404, whatever the
      // router could not match there (a path parameter over maxParamLength included).
      if (options.bareNotFound?.some((prefix) => path.startsWith(prefix))) return reply.code(404).send();
      const allowed = allowedMethods(mirror, path);
      // A path a route takes as it is (a wildcard: the docs' static files) is not redirected.
      if (!path.endsWith('/') && allowed.length === 0 && allowedMethods(mirror, `${path}/`).length > 0) {
        return reply.redirect(`${path}/${query}`, 308);
      }
      // Surfaces whose protocol has its own error body (TAXII's) answer 404 and 405 in it.
      const foreign = options.foreignErrors?.find((f) => path.startsWith(f.prefix));
      // A route that took this method and found nothing (a missing static file) is a 404, not a 405.
      if (allowed.length > 0 && !allowed.includes(request.method)) {
        if (foreign) return foreign.send(reply.header('allow', allowed.join(', ')), 405, `Method "${request.method}" not allowed.`);
        return sendProblem(
          reply,
          problem(405, 'method_not_allowed', `Method "${request.method}" not allowed.`, String(request.id)),
          { allow: allowed.join(', ') },
        );
      }
      if (foreign) return foreign.send(reply, 404, 'Not found.');
      return sendProblem(reply, problem(404, 'not_found', 'Not found.', String(request.id)));
    });
  },
  { name: 'conventions' },
);

/** A path prefix whose 404 and 405 answers are written by its own protocol's error sender. */
export interface ForeignErrors {
  prefix: string;
  send(reply: FastifyReply, status: 404 | 405, title: string): FastifyReply;
}

/** How many times a header is sent (`rawHeaders`: names and values in turn). */
function countHeader(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const h = rawHeaders[i] as string;
    // The length first: lower-casing every header name of every request costs more.
    if (h.length === name.length && h.toLowerCase() === name) n++;
  }
  return n;
}

function splitUrl(url: string): [string, string] {
  const i = url.indexOf('?');
  return i === -1 ? [url, ''] : [url.slice(0, i), url.slice(i)];
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function allowedMethods(router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, path: string): string[] {
  return METHODS.filter((m) => router.find(m, path) !== null);
}
