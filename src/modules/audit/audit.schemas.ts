import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';

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
export type AuditEntryOut = Static<typeof AuditEntrySchema>;
