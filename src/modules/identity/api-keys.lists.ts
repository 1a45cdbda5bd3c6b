import { Listing } from '../../db/listing.js';
import { ROLES } from '../../domain/roles.js';

/** API keys: your own, or (admins) those of the whole organization. */
export const apiKeyListing = new Listing({
  filters: {
    role: { kind: 'enum', column: 'role', values: ROLES, description: 'Only keys of these roles.' },
    created_by: { kind: 'uuid', column: 'user_id', description: 'Only the keys of this user.' },
  },
  search: ['name', 'prefix'],
  ordering: { created_at: 'created_at', name: 'name', last_used_at: 'last_used_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});
