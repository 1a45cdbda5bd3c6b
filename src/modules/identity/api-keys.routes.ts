import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { apiKeyListing } from './api-keys.lists.js';
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyPatchSchema, ApiKeySchema } from './api-keys.schemas.js';
import type { ApiKeysService } from './api-keys.service.js';
import { presentApiKey } from './identity.presenters.js';
import { principalOf } from './principal.js';

const tags = ['auth'];
const PRESENTED =
  'A key is accepted as `Authorization: Bearer tm_...`, as `X-API-Key: tm_...` or as `hibp-api-key: tm_...`; it acts as its creator with its own role, counts against the plan limit, and stops at once (every process, every node) when revoked, expired, or when its creator is deactivated, removed or demoted below its role. A key cannot manage keys (403).';

/** /auth/api-keys/: keys for machines, managed by the people who make them (admins: the organization's). */
export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ keys: ApiKeysService }> = async (app, { keys }) => {
  app.get(
    '/auth/api-keys/',
    {
      schema: {
        tags,
        summary: 'List API keys',
        description: `Your keys; an admin sees every key of the organization. ${PRESENTED}`,
        querystring: listQuerystring(apiKeyListing),
        response: { 200: PageSchema(ApiKeySchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return envelope(request, await keys.list(p, parseList(apiKeyListing, request.query, p)));
    },
  );

  app.post(
    '/auth/api-keys/',
    {
      schema: {
        tags,
        summary: 'Create an API key',
        description: `201 with \`key\`, shown this once: threatmon keeps only its SHA-256. \`role\` defaults to yours and cannot be above it (403); \`expires_at\` must be in the future (400). Audited. ${PRESENTED}`,
        body: ApiKeyCreateSchema,
        response: { 201: ApiKeyCreatedSchema, ...errorResponses(400, 401, 403, 415) },
      },
    },
    async (request, reply) => {
      const created = await keys.create(principalOf(request), request.body, request.ip);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/auth/api-keys/:id/',
    {
      schema: { tags, summary: 'One API key', description: 'Yours, or for an admin any key of the organization; otherwise 404. Shows the key\'s prefix, never the key.', params: IdParams, response: { 200: ApiKeySchema, ...errorResponses(401, 403, 404) } },
    },
    async (request) => presentApiKey(await keys.get(principalOf(request), request.params.id)),
  );

  app.patch(
    '/auth/api-keys/:id/',
    {
      schema: {
        tags,
        summary: 'Rename an API key or change its role',
        description: 'role: at most yours (403). Audited; a new role applies at once on every node.',
        params: IdParams,
        body: ApiKeyPatchSchema,
        response: { 200: ApiKeySchema, ...errorResponses(400, 401, 403, 404, 415) },
      },
    },
    async (request) => presentApiKey(await keys.update(principalOf(request), request.params.id, request.body, request.ip)),
  );

  app.delete(
    '/auth/api-keys/:id/',
    {
      schema: {
        tags,
        summary: 'Revoke an API key',
        description: 'It stops working at once, on every process and node (a request with it answers 401 as for a key that never existed). Audited.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked.' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await keys.revoke(principalOf(request), request.params.id, request.ip);
      return reply.code(204).send(null);
    },
  );
};
