import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { forbidden, notFound } from '../../errors.js';
import { toProblem } from '../../http/conventions.js';
import { publicBase } from '../../http/listing.js';
import type { BoundPlugin } from '../../http/routes.js';
import { principalOf } from '../identity/index.js';
import { formatUs, negotiate, nextToken, objectQuery, type TaxiiQuery } from './taxii.query.js';
import type { StoredObject } from './taxii.repository.js';
import type { CollectionKind } from './taxii.schemas.js';
import {
  ApiRootSchema,
  CollectionParams,
  CollectionSchema,
  CollectionsSchema,
  DiscoverySchema,
  EnvelopeSchema,
  ManifestSchema,
  ObjectParams,
  ObjectsQuerySchema,
  STIX_MEDIA,
  TAXII_MEDIA,
  TaxiiErrorSchema,
  VersionsSchema,
} from './taxii.schemas.js';
import type { CollectionPage, TaxiiService } from './taxii.service.js';

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
const tags = ['taxii'];
const security: Array<Record<string, string[]>> = [{ basicAuth: [] }, { bearerAuth: [] }, { apiKey: [] }];
const media = (schema: object, options: { objects?: boolean; description?: string; dated?: boolean } = {}) => ({
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
const errors = {
  400: error('A filter or parameter that is not valid.'),
  401: error('No credentials, or wrong ones (WWW-Authenticate: Basic).'),
  403: error('Not allowed: the collections are read-only.'),
  404: error("No such API root, collection or object (another organization's included)."),
  406: error('The Accept header names no media type this server answers.'),
  429: error("The organization's plan rate limit."),
  500: error('Internal error, logged with the request id (error_id).'),
};
const bodyErrors = { ...errors, 413: error('Body too large.'), 415: error('A body this server does not take.') };

// Bodies go out as bytes: Fastify would rewrite the media type of a string (version="2.1"; charset),
// which TAXII clients compare token by token.

/** A TAXII error message (TAXII 2.1 section 3.6.1), with threatmon's code and the request id. */
export function sendTaxiiError(reply: FastifyReply, status: number, title: string, description?: string, code?: string): FastifyReply {
  if (status === 401) reply.header('www-authenticate', 'Basic realm="threatmon TAXII", charset="UTF-8"');
  const body = { title, ...(description ? { description } : {}), error_id: String(reply.request.id), ...(code ? { error_code: code } : {}), http_status: String(status) };
  return reply.code(status).header('content-type', TAXII_MEDIA).send(Buffer.from(JSON.stringify(body)));
}

/**
 * TAXII 2.1, read-only (OASIS TAXII 2.1): discovery, one API root per organization (its id), the
 * indicators and exposures collections, their objects, manifest and versions; Basic, Bearer or
 * API key authentication; errors in TAXII's format.
 */
export const taxiiRoutes: FastifyPluginAsyncTypebox<{ taxii: TaxiiService; authenticate: BoundPlugin; bodyLimit: number; prefix: string }> = async (app, { taxii, authenticate, bodyLimit }) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const [p, headers] = toProblem(err, request);
    if (p.status >= 500) request.log.error({ err, request_id: request.id }, 'request failed');
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    return sendTaxiiError(reply, p.status, p.title, p.detail, p.code);
  });
  app.decorateRequest('taxiiMedia', TAXII_MEDIA);
  // A client writes in TAXII's own media type: read (within the limit) and set aside, the write is 403 anyway.
  app.addContentTypeParser('application/taxii+json', { parseAs: 'buffer', bodyLimit }, (_request, _body, done) => done(null, undefined));
  // Accept is checked before credentials: a client that cannot read the answer learns it first.
  app.addHook('onRequest', async (request) => {
    const kind = request.routeOptions.config.taxii;
    if (kind) request.taxiiMedia = negotiate(request.headers.accept, kind === 'objects');
  });
  await authenticate.register(app);

  const root = (request: FastifyRequest) => {
    const p = principalOf(request);
    if ((request.params as { root: string }).root.toLowerCase() !== p.organization.id) throw notFound('No such API root.');
    return p;
  };
  const rootUrl = (request: FastifyRequest) => `${publicBase(request)}${TAXII_PREFIX}/${principalOf(request).organization.id}/`;
  const collectionOf = async (request: FastifyRequest): Promise<CollectionKind> => {
    const found = await taxii.collection(root(request), (request.params as { collection: string }).collection);
    if (!found) throw notFound('No such collection.');
    return found.kind;
  };
  const send = (reply: FastifyReply, json: string, rows?: StoredObject[]) => {
    if (rows?.length) reply.header('x-taxii-date-added-first', formatUs(rows[0]!.added_us)).header('x-taxii-date-added-last', formatUs(rows.at(-1)!.added_us));
    return reply.header('content-type', reply.request.taxiiMedia).send(Buffer.from(json));
  };
  /** A page's answer: `more`, `next` when there is more, and `key` (its rows' JSON) when it has rows; the date headers. */
  const sendPage = (reply: FastifyReply, { rows, more }: CollectionPage, key: string, json: () => string) =>
    send(reply, `{"more":${more}${more ? `,"next":${JSON.stringify(nextToken(rows.at(-1)!.added_us))}` : ''}${rows.length ? `,"${key}":${json()}` : ''}}`, rows);
  const objectsOf = (rows: StoredObject[]) => `[${rows.map((r) => r.object).join(',')}]`;
  const versionOf = (r: StoredObject) => r.version || formatUs(r.added_us);

  app.get(
    '/',
    {
      // Only /taxii2/: /taxii2 answers 308 to it, as every path without its slash does.
      prefixTrailingSlash: 'slash',
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_discovery', summary: 'TAXII discovery', description: "The server and the caller's API root (its organization's).", response: { 200: media(DiscoverySchema), ...errors } },
    },
    async (request, reply) => {
      const url = rootUrl(request);
      const body = { title: 'threatmon TAXII 2.1', description: 'Indicators and leak exposures of your organization, read-only.', default: url, api_roots: [url] };
      return send(reply, JSON.stringify(body));
    },
  );

  app.get(
    '/:root/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_root', summary: 'TAXII API root', description: "The organization's API root; another organization's is 404.", params: Type.Object({ root: Type.String() }), response: { 200: media(ApiRootSchema), ...errors } },
    },
    async (request, reply) => {
      const p = root(request);
      return send(reply, JSON.stringify({ title: p.organization.name, description: `The TAXII collections of ${p.organization.name}.`, versions: [TAXII_MEDIA], max_content_length: bodyLimit }));
    },
  );

  const presentCollection = (c: Awaited<ReturnType<TaxiiService['collections']>>[number]) => ({ id: c.id, title: c.title, description: c.description, can_read: true, can_write: false, media_types: [STIX_MEDIA] });

  app.get(
    '/:root/collections/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_collections_list', summary: 'TAXII collections', description: 'indicators and exposures.', params: Type.Object({ root: Type.String() }), response: { 200: media(CollectionsSchema), ...errors } },
    },
    async (request, reply) => send(reply, JSON.stringify({ collections: (await taxii.collections(root(request))).map(presentCollection) })),
  );

  app.get(
    '/:root/collections/:collection/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_collections_retrieve', summary: 'A TAXII collection', description: 'One collection.', params: CollectionParams, response: { 200: media(CollectionSchema), ...errors } },
    },
    async (request, reply) => {
      const found = await taxii.collection(root(request), request.params.collection);
      if (!found) throw notFound('No such collection.');
      return send(reply, JSON.stringify(presentCollection(found)));
    },
  );

  app.get(
    '/:root/collections/:collection/objects/',
    {
      config: { taxii: 'objects' },
      schema: {
        tags,
        security,
        operationId: 'taxii_objects_list',
        summary: 'Objects of a TAXII collection',
        description:
          'In date_added order, at most 1,000 a page. Walking with next, or with added_after set to the last X-TAXII-Date-Added-Last, gives each object version exactly once: date_added has microseconds and is unique in the collection, and is given in commit order when the object becomes visible.',
        params: CollectionParams,
        querystring: ObjectsQuerySchema,
        response: { 200: media(EnvelopeSchema, { objects: true, dated: true }), ...errors },
      },
    },
    async (request, reply) => {
      const q = objectQuery(await collectionOf(request), request.query as TaxiiQuery);
      if (!q) return send(reply, '{"more":false}');
      const page = await taxii.page(principalOf(request), q);
      return sendPage(reply, page, 'objects', () => objectsOf(page.rows));
    },
  );

  app.get(
    '/:root/collections/:collection/manifest/',
    {
      config: { taxii: 'objects' },
      schema: { tags, security, operationId: 'taxii_manifest_list', summary: 'Manifest of a TAXII collection', description: 'The objects\' ids, versions and date_added, with the objects/ filters.', params: CollectionParams, querystring: ObjectsQuerySchema, response: { 200: media(ManifestSchema, { dated: true }), ...errors } },
    },
    async (request, reply) => {
      const q = objectQuery(await collectionOf(request), request.query as TaxiiQuery);
      if (!q) return send(reply, '{"more":false}');
      const page = await taxii.page(principalOf(request), { ...q, withoutObject: true });
      return sendPage(reply, page, 'objects', () => JSON.stringify(page.rows.map((r) => ({ id: r.stix_id, date_added: formatUs(r.added_us), version: versionOf(r), media_type: STIX_MEDIA }))));
    },
  );

  const objectRoute = async (request: FastifyRequest, versions?: string[]) => {
    const collection = await collectionOf(request);
    const { object } = request.params as { object: string };
    const q = objectQuery(collection, request.query as TaxiiQuery, { id: object, versions });
    const page = q ? await taxii.page(principalOf(request), q) : { rows: [], more: false };
    if (!page.rows.length && !(await taxii.exists(principalOf(request), collection, object))) throw notFound('No such object in this collection.');
    return page;
  };

  app.get(
    '/:root/collections/:collection/objects/:object/',
    {
      config: { taxii: 'objects' },
      schema: {
        tags,
        security,
        operationId: 'taxii_objects_retrieve',
        summary: 'An object of a TAXII collection',
        description: 'Its versions that match (match[version], default last), with added_after, limit and next.',
        params: ObjectParams,
        querystring: Type.Omit(ObjectsQuerySchema, ['match[id]', 'match[type]']),
        response: { 200: media(EnvelopeSchema, { objects: true, dated: true }), ...errors },
      },
    },
    async (request, reply) => {
      const page = await objectRoute(request);
      return sendPage(reply, page, 'objects', () => objectsOf(page.rows));
    },
  );

  app.get(
    '/:root/collections/:collection/objects/:object/versions/',
    {
      config: { taxii: 'resource' },
      schema: {
        tags,
        security,
        operationId: 'taxii_objects_versions_list',
        summary: 'Versions of an object of a TAXII collection',
        description: 'Every version, oldest first, with added_after, limit and next.',
        params: ObjectParams,
        querystring: Type.Pick(ObjectsQuerySchema, ['added_after', 'limit', 'next', 'match[spec_version]']),
        response: { 200: media(VersionsSchema, { dated: true }), ...errors },
      },
    },
    async (request, reply) => {
      const page = await objectRoute(request, ['all']);
      return sendPage(reply, page, 'versions', () => JSON.stringify(page.rows.map(versionOf)));
    },
  );

  // The collections are threatmon's own record: no client writes them (TAXII: 403 for can_write false).
  const readOnly = async () => {
    throw forbidden('This collection is read-only (can_write is false).');
  };
  app.post('/:root/collections/:collection/objects/', { config: { taxii: 'resource' }, schema: { tags, security, operationId: 'taxii_objects_create', summary: 'Add objects (refused)', description: 'Always 403 after authentication: the collections are read-only.', params: CollectionParams, response: bodyErrors } }, async (request) => {
    await collectionOf(request);
    return readOnly();
  });
  app.delete('/:root/collections/:collection/objects/:object/', { config: { taxii: 'resource' }, schema: { tags, security, operationId: 'taxii_objects_destroy', summary: 'Delete an object (refused)', description: 'Always 403 after authentication: the collections are read-only.', params: ObjectParams, response: errors } }, async (request) => {
    await collectionOf(request);
    return readOnly();
  });
};
