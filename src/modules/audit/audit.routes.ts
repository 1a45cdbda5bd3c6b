import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { listQuerystring, parseList } from '../../http/list-query.js';
import { envelope, PageSchema } from '../../http/listing.js';
import type { AuditLog } from './audit.repository.js';
import { auditListing } from './audit.lists.js';
import { AuditEntrySchema } from './audit.schemas.js';
import { errorResponses } from '../../http/schemas.js';

/**
 * The audit log's routes. `caller` says which organization a request is by (the identity module's
 * principal): passed in, since every module, identity too, records into this one.
 */
export const auditRoutes: FastifyPluginAsyncTypebox<{ database: Pick<Database, 'db' | 'dialect'>; log: AuditLog; caller: (request: FastifyRequest) => { organization: { id: string } } }> = async (
  app,
  { database, log, caller },
) => {
  app.get(
    '/audit-log/',
    {
      config: { minRole: 'admin' },
      schema: {
        tags: ['audit'],
        summary: 'Audit log of the organization',
        description: 'Every write and every login attempt, newest first. Admin only.',
        querystring: listQuerystring(auditListing),
        response: { 200: PageSchema(AuditEntrySchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => envelope(request, await log.list(database, caller(request).organization.id, parseList(auditListing, request.query))),
  );
};
