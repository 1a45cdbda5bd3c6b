import { Listing } from '../../db/listing.js';

/** The audit module's list: an organization's entries. */
export const auditListing = new Listing({
  filters: {
    actor: { kind: 'uuid', column: 'actor_id', description: 'Only entries by this user.' },
    action: { kind: 'text', column: 'action', description: 'Only this action, e.g. `user.updated`.' },
    target_type: { kind: 'text', column: 'target_type', description: 'Only this kind of target, e.g. `user`.' },
  },
  ordering: { created_at: 'created_at', action: 'action' },
  idColumn: 'id',
  createdColumn: 'created_at',
});
