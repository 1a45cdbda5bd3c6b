import { Listing } from '../../db/listing.js';
import { ROLES } from '../../domain/roles.js';

/** The identity module's list: the users of an organization. */
export const userListing = new Listing({
  filters: {
    role: { kind: 'enum', column: 'role', values: ROLES, description: 'Only these roles.' },
    is_active: { kind: 'boolean', column: 'is_active', description: 'Only active (true) or deactivated (false) users.' },
  },
  search: ['username', 'email'],
  ordering: { created_at: 'created_at', username: 'username', last_login_at: 'last_login_at' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});
