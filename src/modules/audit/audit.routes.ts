import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { AppDeps } from '../../deps.js';
import type { AuditLog } from './audit.repository.js';
import { principalOf } from '../auth/principal.js';
import { envelope, Listing, PageSchema } from '../../http/listing.js';
import { errorResponses, Nullable, Timestamp, Uuid } from '../../http/schemas.js';

export const AuditEntrySchema = Type.Object(
  {
    id: Uuid('Entry id.'),
    actor: Nullable(Uuid('User who acted.'), 'User who acted, or null (system, or unknown username at login).'),
    action: Type.String({ description: 'What happened, `<resource>.<verb>`: e.g. `auth.login_failed`, `user.updated`, `organization.plan_changed`.' }),
    target_type: Type.String({ description: 'Kind of record acted on.' }),
    target_id: Nullable(Type.String(), 'Id of the record acted on.'),
    ip: Nullable(Type.String(), 'Client IP address.'),
    created_at: Timestamp('When it happened.'),
    changes: Type.Record(Type.String(), Type.Unknown(), { description: 'What changed: `{field: {from, to}}` for updates, the new values for creations.' }),
  },
  { title: 'AuditEntry' },
);
type AuditEntryOut = Static<typeof AuditEntrySchema>;

const listing = new Listing({
  filters: {
    actor: { kind: 'uuid', column: 'actor_id', description: 'Only entries by this user.' },
    action: { kind: 'text', column: 'action', description: 'Only this action, e.g. `user.updated`.' },
    target_type: { kind: 'text', column: 'target_type', description: 'Only this kind of target, e.g. `user`.' },
  },
  ordering: { created_at: 'created_at', action: 'action' },
  idColumn: 'id',
  createdColumn: 'created_at',
});

export const auditRoutes: FastifyPluginAsyncTypebox<{ deps: Pick<AppDeps, 'database'>; log: AuditLog }> = async (app, { deps, log }) => {
  app.get(
    '/audit-log/',
    {
      config: { minRole: 'admin' },
      schema: {
        tags: ['audit'],
        summary: 'Audit log of the organization',
        description: 'Every write and every login attempt, newest first. Admin only.',
        querystring: listing.querystring,
        response: { 200: PageSchema(AuditEntrySchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const p = principalOf(request);
      const qb = listing.filter(
        log.selectInOrg(deps.database.db, p.organization.id),
        request.query,
        { dialect: deps.database.dialect },
      );
      return envelope(request, await listing.page(qb, request.query, (r: Record<string, unknown>): AuditEntryOut => ({
        id: String(r.id),
        actor: (r.actor_id as string | null) ?? null,
        action: String(r.action),
        target_type: String(r.target_type),
        target_id: (r.target_id as string | null) ?? null,
        ip: (r.ip as string | null) ?? null,
        created_at: String(r.created_at),
        changes: JSON.parse(String(r.changes)),
      })));
    },
  );
};
