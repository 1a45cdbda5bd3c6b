import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { toProblem } from '../../http/conventions.js';
import { formatUs, negotiate, nextToken } from './taxii.query.js';
import type { StoredObject } from './taxii.repository.js';
import { STIX_MEDIA, TAXII_MEDIA, TaxiiErrorSchema } from './taxii.schemas.js';
import type { CollectionPage } from './taxii.service.js';

/** TAXII's side of HTTP: its media types, its error messages, and its envelope written as bytes. */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A TAXII route: `objects` ones may also answer STIX's media type. */
    taxii?: 'resource' | 'objects';
  }
  interface FastifyRequest {
    /** The media type a TAXII route answers in, chosen from Accept once. */
    taxiiMedia: string;
  }
}

export const TAXII_PREFIX = '/taxii2';

/** An answer of a TAXII route, for the OpenAPI document: in TAXII's media type (objects: STIX's too), with the date headers of a page. */
export const media = (schema: object, options: { objects?: boolean; description?: string; dated?: boolean } = {}) => ({
  description: options.description ?? 'The answer.',
  content: { [TAXII_MEDIA]: { schema }, ...(options.objects ? { [STIX_MEDIA]: { schema } } : {}) },
  ...(options.dated && {
    headers: {
      'x-taxii-date-added-first': { type: 'string', description: 'The date_added of the first object of the page (when it has any).' },
      'x-taxii-date-added-last': { type: 'string', description: 'The date_added of the last object of the page: the added_after of the next request.' },
    },
  }),
});
const error = (description: string) => media(TaxiiErrorSchema, { description });
export const errors = {
  400: error('A filter or parameter that is not valid.'),
  401: error('No credentials, or wrong ones (WWW-Authenticate: Basic).'),
  403: error('Not allowed: the collections are read-only.'),
  404: error("No such API root, collection or object (another organization's included)."),
  406: error('The Accept header names no media type this server answers.'),
  429: error("The organization's plan rate limit."),
  500: error('Internal error, logged with the request id (error_id).'),
};
export const bodyErrors = { ...errors, 413: error('Body too large.'), 415: error('A body this server does not take.') };

// Bodies go out as bytes: Fastify would rewrite the media type of a string (version="2.1"; charset),
// which TAXII clients compare token by token.

/** A TAXII error message (TAXII 2.1 section 3.6.1), with threatmon's code and the request id. */
export function sendTaxiiError(reply: FastifyReply, status: number, title: string, description?: string, code?: string): FastifyReply {
  if (status === 401) reply.header('www-authenticate', 'Basic realm="threatmon TAXII", charset="UTF-8"');
  const body = { title, ...(description ? { description } : {}), error_id: String(reply.request.id), ...(code ? { error_code: code } : {}), http_status: String(status) };
  return reply.code(status).header('content-type', TAXII_MEDIA).send(Buffer.from(JSON.stringify(body)));
}

/**
 * The scope's TAXII conventions: every error as a TAXII error message, the answer's media type
 * chosen from Accept before credentials are checked (a client that cannot read the answer learns
 * it first), and a body in TAXII's own media type read within `bodyLimit` and set aside.
 */
export function taxiiConventions(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const [p, headers] = toProblem(err, request);
    if (p.status >= 500) request.log.error({ err, request_id: request.id }, 'request failed');
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    return sendTaxiiError(reply, p.status, p.title, p.detail, p.code);
  });
  app.decorateRequest('taxiiMedia', TAXII_MEDIA);
  app.addContentTypeParser('application/taxii+json', { parseAs: 'buffer', bodyLimit }, (_request, _body, done) => done(null, undefined));
  app.addHook('onRequest', async (request) => {
    const kind = request.routeOptions.config.taxii;
    if (kind) request.taxiiMedia = negotiate(request.headers.accept, kind === 'objects');
  });
}

/** An answer: the JSON text as bytes in the negotiated media type, with a page's date headers when it has rows. */
export function send(reply: FastifyReply, json: string, rows?: StoredObject[]): FastifyReply {
  if (rows?.length) reply.header('x-taxii-date-added-first', formatUs(rows[0]!.added_us)).header('x-taxii-date-added-last', formatUs(rows.at(-1)!.added_us));
  return reply.header('content-type', reply.request.taxiiMedia).send(Buffer.from(json));
}

/** A page's envelope: `more`, `next` when there is more, and `key` (its rows' JSON) when it has rows; the date headers. */
export function sendPage(reply: FastifyReply, { rows, more }: CollectionPage, key: string, json: () => string): FastifyReply {
  return send(reply, `{"more":${more}${more ? `,"next":${JSON.stringify(nextToken(rows.at(-1)!.added_us))}` : ''}${rows.length ? `,"${key}":${json()}` : ''}}`, rows);
}
