import { PLANS } from '../../config.js';
import { Listing } from '../../db/listing.js';

/** The organizations module's list: every organization (staff). */
export const organizationListing = new Listing({
  filters: { plan: { kind: 'enum', column: 'plan', values: PLANS, description: 'Only these plans.' } },
  search: ['name'],
  ordering: { created_at: 'created_at', name: 'name' },
  idColumn: 'id',
  createdColumn: 'created_at',
  updatedColumn: 'updated_at',
});
