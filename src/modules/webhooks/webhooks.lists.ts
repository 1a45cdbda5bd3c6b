import { Listing } from '../../db/listing.js';

/** The webhooks module's lists: the filters, search and orderings of each. */

export const deliveryListing = new Listing({
  filters: {},
  ordering: { created_at: 'webhook_attempts.created_at' },
  idColumn: 'webhook_attempts.id',
  createdColumn: 'webhook_attempts.created_at',
});

export const webhookListing = new Listing({
  filters: { is_active: { kind: 'boolean', column: 'webhooks.is_active', description: 'Only active (true) or inactive (false) webhooks.' } },
  search: ['webhooks.url', 'webhooks.description'],
  ordering: { created_at: 'webhooks.created_at', url: 'webhooks.url' },
  idColumn: 'webhooks.id',
  createdColumn: 'webhooks.created_at',
  updatedColumn: 'webhooks.updated_at',
});
