import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema, publicBase, sendJsonPage } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { actorOf, principalOf } from '../identity/index.js';
import { ExposureSchema, TokenCreateSchema, TokenPatchSchema, TrackingTokenSchema } from './tracking-tokens.schemas.js';
import type { TrackingTokensService } from './tracking-tokens.service.js';
import { exposureListing, tokenListing } from './tracking-tokens.lists.js';

const tags = ['tracking-tokens'];


export const trackingTokensRoutes: FastifyPluginAsyncTypebox<{ tokens: TrackingTokensService }> = async (app, { tokens }) => {
  app.get(
    '/tracking-tokens/',
    {
      schema: {
        tags,
        summary: 'Your tracking tokens',
        description: 'Filters kind, status (comma lists); search looks in the name and the memo. Each token shows its material.',
        querystring: listQuerystring(tokenListing),
        response: { 200: PageSchema(TrackingTokenSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await tokens.list(principalOf(request), parseList(tokenListing, request.query), publicBase(request)))),
  );

  app.post(
    '/tracking-tokens/',
    {
      config: { etag: [201], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Create a tracking token',
        description:
          'Analyst or above. 201 with its material: web_bug and redirect get a `trigger_url` (its key has 192 random bits), redirect needs `redirect_url` (http or https), credential gets a `username` and `password` (yours if given; the username must not be used by an account or another token), api_key an `api_key` shaped like this API\'s access tokens. A field of another kind is 400.',
        body: TokenCreateSchema,
        response: { 201: TrackingTokenSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const row = await tokens.create(actorOf(request), request.body);
      reply.code(201).header('etag', etagOf(row.version));
      return tokens.present(row, publicBase(request));
    },
  );

  app.get(
    '/tracking-tokens/:id/',
    {
      config: { etag: [200] },
      schema: {
        tags,
        summary: 'One tracking token',
        description: 'With its material. The ETag covers what PATCH changes; exposure_count and last_exposed_at move without it.',
        params: IdParams,
        response: { 200: TrackingTokenSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const row = await tokens.get(principalOf(request), request.params.id);
      if (notModified(request, reply, row.version)) return reply;
      return tokens.present(row, publicBase(request));
    },
  );

  app.patch(
    '/tracking-tokens/:id/',
    {
      config: { etag: [200], minRole: 'analyst' },
      schema: {
        tags,
        summary: 'Update a tracking token',
        description: 'Analyst or above: name, memo, status, ignore_ips (the material never changes: make a new token). Honours If-Match (412).',
        params: IdParams,
        body: TokenPatchSchema,
        response: { 200: TrackingTokenSchema, ...errorResponses(400, 401, 403, 404, 412, 415) },
      },
    },
    async (request, reply) => {
      const row = await tokens.update(actorOf(request), request.params.id, request.body, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(row.version));
      return tokens.present(row, publicBase(request));
    },
  );

  app.delete(
    '/tracking-tokens/:id/',
    {
      config: { minRole: 'admin' },
      schema: {
        tags,
        summary: 'Delete a tracking token',
        description: 'Admin or above. Its exposures go with it; its trigger then answers as an unknown key does (the same GIF) and records nothing.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await tokens.remove(actorOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/tracking-tokens/:id/timeline/',
    {
      schema: {
        tags,
        summary: "A token's exposures",
        description:
          'Newest first (`-occurred_at`). Filters channel (comma list), occurred_after, occurred_before. At most 60 exposures of a token are recorded in any 60 s through http, login and api_key (a flood records the first 60); each leak record exposing it is recorded once.',
        params: IdParams,
        querystring: listQuerystring(exposureListing),
        response: { 200: PageSchema(ExposureSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => sendJsonPage(reply, envelope(request, await tokens.timeline(principalOf(request), request.params.id, parseList(exposureListing, request.query)))),
  );
};
