import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppDeps } from '../../deps.js';
import { principalOf } from '../auth/principal.js';
import { assertIfMatch, etagOf, notModified } from '../../http/etag.js';
import { envelope, Listing, PageSchema } from '../../http/listing.js';
import { errorResponses } from '../../http/schemas.js';
import { OrganizationCreateSchema, OrganizationPatchSchema, OrganizationSchema, UsageSchema } from './organizations.schemas.js';
import type { OrganizationsService } from './organizations.service.js';
import type { OrganizationRow } from './organizations.repository.js';
import { PLANS } from '../../config.js';

const listing = new Listing({
  filters: { plan: { kind: 'enum', column: 'plan', values: PLANS, description: 'Only these plans.' } },
  search: ['name'],
  ordering: { created_at: 'created_at', name: 'name' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});

export const organizationsRoutes: FastifyPluginAsyncTypebox<{ deps: Pick<AppDeps, 'database'>; orgs: OrganizationsService }> = async (app, { deps, orgs }) => {
  const tags = ['organizations'];

  app.get(
    '/organization/',
    {
      config: { etag: [200] },
      schema: {
        tags,
        summary: 'Your organization',
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
        querystring: listing.querystring,
        response: { 200: PageSchema(OrganizationSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const qb = listing.filter(orgs.selectAll(), request.query, { dialect: deps.database.dialect });
      return envelope(request, await listing.page(qb, request.query, (row: OrganizationRow) =>
        orgs.present({ ...row, member_count: Number(row.member_count ?? 0) }),
      ));
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
