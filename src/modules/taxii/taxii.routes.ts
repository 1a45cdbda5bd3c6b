import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { forbidden, notFound } from '../../errors.js';
import { publicBase } from '../../http/listing.js';
import type { BoundPlugin } from '../../http/routes.js';
import { principalOf } from '../identity/index.js';
import { bodyErrors, errors, media, send, sendPage, TAXII_PREFIX, taxiiConventions } from './taxii.http.js';
import { manifestJson, objectsJson, presentApiRoot, presentCollection, presentDiscovery, versionOf } from './taxii.presenters.js';
import { objectQuery, type TaxiiQuery } from './taxii.query.js';
import {
  ApiRootSchema,
  CollectionParams,
  CollectionSchema,
  CollectionsSchema,
  type CollectionKind,
  DiscoverySchema,
  EnvelopeSchema,
  ManifestSchema,
  ObjectParams,
  ObjectsQuerySchema,
  VersionsSchema,
} from './taxii.schemas.js';
import type { TaxiiService } from './taxii.service.js';

const tags = ['taxii'];
const security: Array<Record<string, string[]>> = [{ basicAuth: [] }, { bearerAuth: [] }, { apiKey: [] }];

/**
 * TAXII 2.1, read-only (OASIS TAXII 2.1): discovery, one API root per organization (its id), the
 * indicators and exposures collections, their objects, manifest and versions; Basic, Bearer or
 * API key authentication; errors in TAXII's format.
 */
export const taxiiRoutes: FastifyPluginAsyncTypebox<{ taxii: TaxiiService; authenticate: BoundPlugin; bodyLimit: number; prefix: string }> = async (app, { taxii, authenticate, bodyLimit }) => {
  taxiiConventions(app, bodyLimit);
  await authenticate.register(app);

  /** The caller's principal, when `root` is its organization's API root (another's is 404). */
  const root = (request: FastifyRequest, rootId: string) => {
    const p = principalOf(request);
    if (rootId.toLowerCase() !== p.organization.id) throw notFound('No such API root.');
    return p;
  };
  const rootUrl = (request: FastifyRequest) => `${publicBase(request)}${TAXII_PREFIX}/${principalOf(request).organization.id}/`;
  const collectionOf = async (request: FastifyRequest, params: { root: string; collection: string }): Promise<CollectionKind> => {
    const found = await taxii.collection(root(request, params.root), params.collection);
    if (!found) throw notFound('No such collection.');
    return found.kind;
  };

  app.get(
    '/',
    {
      // Only /taxii2/: /taxii2 answers 308 to it, as every path without its slash does.
      prefixTrailingSlash: 'slash',
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_discovery', summary: 'TAXII discovery', description: "The server and the caller's API root (its organization's).", response: { 200: media(DiscoverySchema), ...errors } },
    },
    async (request, reply) => {
      return send(reply, JSON.stringify(presentDiscovery(rootUrl(request))));
    },
  );

  app.get(
    '/:root/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_root', summary: 'TAXII API root', description: "The organization's API root; another organization's is 404.", params: Type.Object({ root: Type.String() }), response: { 200: media(ApiRootSchema), ...errors } },
    },
    async (request, reply) => {
      return send(reply, JSON.stringify(presentApiRoot(root(request, request.params.root).organization, bodyLimit)));
    },
  );

  app.get(
    '/:root/collections/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_collections_list', summary: 'TAXII collections', description: 'indicators and exposures.', params: Type.Object({ root: Type.String() }), response: { 200: media(CollectionsSchema), ...errors } },
    },
    async (request, reply) => send(reply, JSON.stringify({ collections: (await taxii.collections(root(request, request.params.root))).map(presentCollection) })),
  );

  app.get(
    '/:root/collections/:collection/',
    {
      config: { taxii: 'resource' },
      schema: { tags, security, operationId: 'taxii_collections_retrieve', summary: 'A TAXII collection', description: 'One collection.', params: CollectionParams, response: { 200: media(CollectionSchema), ...errors } },
    },
    async (request, reply) => {
      const found = await taxii.collection(root(request, request.params.root), request.params.collection);
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
      const q = objectQuery(await collectionOf(request, request.params), request.query);
      if (!q) return send(reply, '{"more":false}');
      const page = await taxii.page(principalOf(request), q);
      return sendPage(reply, page, 'objects', () => objectsJson(page.rows));
    },
  );

  app.get(
    '/:root/collections/:collection/manifest/',
    {
      config: { taxii: 'objects' },
      schema: { tags, security, operationId: 'taxii_manifest_list', summary: 'Manifest of a TAXII collection', description: 'The objects\' ids, versions and date_added, with the objects/ filters.', params: CollectionParams, querystring: ObjectsQuerySchema, response: { 200: media(ManifestSchema, { dated: true }), ...errors } },
    },
    async (request, reply) => {
      const q = objectQuery(await collectionOf(request, request.params), request.query);
      if (!q) return send(reply, '{"more":false}');
      const page = await taxii.page(principalOf(request), { ...q, withoutObject: true });
      return sendPage(reply, page, 'objects', () => manifestJson(page.rows));
    },
  );

  const objectRoute = async (request: FastifyRequest, params: { root: string; collection: string; object: string }, query: TaxiiQuery, versions?: string[]) => {
    const collection = await collectionOf(request, params);
    const { object } = params;
    const q = objectQuery(collection, query, { id: object, versions });
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
      const page = await objectRoute(request, request.params, request.query);
      return sendPage(reply, page, 'objects', () => objectsJson(page.rows));
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
      const page = await objectRoute(request, request.params, request.query, ['all']);
      return sendPage(reply, page, 'versions', () => JSON.stringify(page.rows.map(versionOf)));
    },
  );

  // The collections are threatmon's own record: no client writes them (TAXII: 403 for can_write false).
  const readOnly = async () => {
    throw forbidden('This collection is read-only (can_write is false).');
  };
  app.post('/:root/collections/:collection/objects/', { config: { taxii: 'resource' }, schema: { tags, security, operationId: 'taxii_objects_create', summary: 'Add objects (refused)', description: 'Always 403 after authentication: the collections are read-only.', params: CollectionParams, response: bodyErrors } }, async (request) => {
    await collectionOf(request, request.params);
    return readOnly();
  });
  app.delete('/:root/collections/:collection/objects/:object/', { config: { taxii: 'resource' }, schema: { tags, security, operationId: 'taxii_objects_destroy', summary: 'Delete an object (refused)', description: 'Always 403 after authentication: the collections are read-only.', params: ObjectParams, response: errors } }, async (request) => {
    await collectionOf(request, request.params);
    return readOnly();
  });
};
