import { Listing } from '../../db/listing.js';
import { CHANNEL_KINDS } from './notifications.schemas.js';

/** The notification channels list: its filters, search and orderings. */
export const channelListing = new Listing({
  filters: {
    kind: { kind: 'enum', column: 'notification_channels.kind', values: CHANNEL_KINDS, description: 'Only these kinds.' },
    is_active: { kind: 'boolean', column: 'notification_channels.is_active', description: 'Only active (true) or disabled (false) channels.' },
  },
  search: ['notification_channels.name'],
  ordering: { created_at: 'notification_channels.created_at', name: 'notification_channels.name' },
  idColumn: 'notification_channels.id',
  createdColumn: 'notification_channels.created_at',
  updatedColumn: 'notification_channels.updated_at',
});
