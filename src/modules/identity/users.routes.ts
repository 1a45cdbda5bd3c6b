import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from './principal.js';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { userListing } from './users.lists.js';
import { errorResponses, IdParams } from '../../http/schemas.js';
import { UserCreateSchema, UserPatchSchema, UserSchema } from './users.schemas.js';
import { presentUser } from './identity.presenters.js';
import type { UsersService } from './users.service.js';

export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService }> = async (app, { users }) => {
  const tags = ['organizations'];

  app.get(
    '/users/',
    {
      config: { minRole: 'admin' },
      schema: {
        tags,
        summary: 'List the users of your organization',
        description: 'Admin only. Search looks in username and email.',
        querystring: listQuerystring(userListing),
        response: { 200: PageSchema(UserSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      return envelope(request, await users.list(p, parseList(userListing, request.query, p)));
    },
  );

  app.post(
    '/users/',
    {
      config: { etag: [201], minRole: 'admin' },
      schema: {
        tags,
        summary: 'Add a user to your organization',
        description: 'Admin only; nobody grants a role above their own (403). Username taken: 409 `duplicate`. The password must have 12+ characters and not appear in a known breach.',
        body: UserCreateSchema,
        response: { 201: UserSchema, ...errorResponses(400, 401, 403, 409, 415) },
      },
    },
    async (request, reply) => {
      const user = await users.create(principalOf(request), request.body, request.ip);
      reply.code(201).header('etag', etagOf(user.version));
      return presentUser(user);
    },
  );

  app.get(
    '/users/:id/',
    {
      config: { etag: [200], minRole: 'admin' },
      schema: {
        tags,
        summary: 'One user', description: 'Admin only. A user of your organization (another organization\'s: 404). Sends its ETag (If-None-Match: 304).',
        params: IdParams,
        response: { 200: UserSchema, 304: Type.Null({ description: 'Not modified (If-None-Match).' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const user = await users.get(principalOf(request), request.params.id);
      if (notModified(request, reply, user.version)) return reply;
      return presentUser(user);
    },
  );

  app.patch(
    '/users/:id/',
    {
      config: { etag: [200], minRole: 'admin' },
      schema: {
        tags,
        summary: 'Change role, e-mail or active state',
        description: 'Admin only; only an owner changes an owner or grants owner. Deactivating revokes all the user\'s tokens at once. The last active owner cannot be demoted or deactivated (409). Honours If-Match (412).',
        params: IdParams,
        body: UserPatchSchema,
        response: { 200: UserSchema, ...errorResponses(400, 401, 403, 404, 409, 412, 415) },
      },
    },
    async (request, reply) => {
      const user = await users.update(principalOf(request), request.params.id, request.body, request.ip, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(user.version));
      return presentUser(user);
    },
  );

  app.delete(
    '/users/:id/',
    {
      config: { minRole: 'admin' },
      schema: {
        tags,
        summary: 'Remove a user',
        description: 'Admin only; only an owner removes an owner; the last owner cannot be removed (409).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Removed.' }), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await users.remove(principalOf(request), request.params.id, request.ip);
      return reply.code(204).send(null);
    },
  );
};
