import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import { organizationListing } from './organizations.lists.js';
import { type AuthService, presentUser, principalOf } from '../identity/index.js';
import { errorResponses } from '../../http/schemas.js';
import { MeSchema, OrganizationCreateSchema, OrganizationPatchSchema, OrganizationSchema, UsageSchema } from './organizations.schemas.js';
import type { OrganizationsService } from './organizations.service.js';

export const organizationsRoutes: FastifyPluginAsyncTypebox<{ orgs: OrganizationsService; auth: Pick<AuthService, 'currentUser'> }> = async (app, { orgs, auth }) => {
  const tags = ['organizations'];

  app.get(
    '/auth/me/',
    { schema: { tags: ['auth'], summary: 'The current user and its organization', description: 'The user the token or API key acts as, with its organization.', response: { 200: MeSchema, ...errorResponses(401) } } },
    async (request) => {
      const p = principalOf(request);
      return { ...presentUser(await auth.currentUser(p)), organization: orgs.present(await orgs.get(p.organization.id)) };
    },
  );

  app.get(
    '/organization/',
    {
      config: { etag: [200] },
      schema: {
        tags,
        summary: 'Your organization', description: 'Your organization: its name, plan, rate limit and member count.',
        response: { 200: OrganizationSchema, 304: Type.Null({ description: 'Not modified.' }), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const org = await orgs.get(principalOf(request).organization.id);
      if (notModified(request, reply, org.version)) return reply;
      return orgs.present(org);
    },
  );

  app.patch(
    '/organization/',
    {
      config: { etag: [200], minRole: 'admin' },
      schema: {
        tags,
        summary: 'Rename your organization or change its plan',
        description: '`name` needs admin, `plan` needs owner (403 otherwise). A plan change applies to the rate limit at once. Honours If-Match.',
        body: OrganizationPatchSchema,
        response: { 200: OrganizationSchema, ...errorResponses(400, 401, 403, 409, 412, 415) },
      },
    },
    async (request, reply) => {
      const org = await orgs.update(principalOf(request), request.body, request.ip, (v) => assertIfMatch(request, v));
      reply.header('etag', etagOf(org.version));
      return orgs.present(org);
    },
  );

  app.get(
    '/organization/usage/',
    {
      schema: {
        tags,
        summary: 'Plan limit and what is in use',
        description: 'The rate-limit window as it stands after this request, and counts of monitors, tracking tokens and open incidents.',
        response: { 200: UsageSchema, ...errorResponses(401) },
      },
    },
    async (request) => orgs.usage(principalOf(request)),
  );

  app.get(
    '/organizations/',
    {
      config: { staffOnly: true },
      schema: {
        tags,
        summary: 'All organizations (staff)',
        description: 'Platform staff only. Search looks in the name.',
        querystring: listQuerystring(organizationListing),
        response: { 200: PageSchema(OrganizationSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      return envelope(request, await orgs.list(parseList(organizationListing, request.query)));
    },
  );

  app.post(
    '/organizations/',
    {
      config: { etag: [201], staffOnly: true },
      schema: {
        tags,
        summary: 'Create a customer organization with its first owner (staff)',
        description: 'Platform staff only. Name or owner username taken: 409 `duplicate`.',
        body: OrganizationCreateSchema,
        response: { 201: OrganizationSchema, ...errorResponses(400, 401, 403, 409, 415) },
      },
    },
    async (request, reply) => {
      const p = principalOf(request);
      const { name, plan, owner } = request.body;
      const { org } = await orgs.create({ name, plan: plan ?? 'starter', owner: { ...owner, role: 'owner' } }, { id: p.user.id, ip: request.ip });
      reply.code(201).header('etag', etagOf(org.version));
      return orgs.present(org);
    },
  );
};
