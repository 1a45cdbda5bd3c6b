import { Listing } from '../../db/listing.js';
import { FEED_KINDS, INDICATOR_TYPES, TLPS } from './feeds.schemas.js';

/** The feeds module's lists: filters, search and orderings. */

export const feedListing = new Listing({
  filters: {
    kind: { kind: 'enum', column: 'feeds.kind', values: FEED_KINDS, description: 'Only these kinds.' },
    is_active: { kind: 'boolean', column: 'feeds.is_active', description: 'Only active (true) or paused (false) feeds.' },
  },
  search: ['feeds.name', 'feeds.url'],
  ordering: { created_at: 'feeds.created_at', name: 'feeds.name', last_success_at: 'feeds.last_success_at' },
  idColumn: 'feeds.id',
  createdColumn: 'feeds.created_at',
  updatedColumn: 'feeds.updated_at',
});

export const indicatorListing = new Listing({
  filters: {
    type: { kind: 'enum', column: 'indicators.type', values: INDICATOR_TYPES, description: 'Only these types.' },
    tlp: { kind: 'enum', column: 'indicators.tlp', values: TLPS, description: 'Only these TLP markings.' },
    revoked: { kind: 'boolean', column: 'indicators.revoked', description: 'Only revoked (true) or current (false) indicators.' },
    false_positive: { kind: 'boolean', column: 'indicators.false_positive', description: 'Only those flagged false positive (true) or not (false).' },
    feed: {
      kind: 'custom',
      schema: { type: 'string', format: 'uuid', description: 'Only indicators this feed gave.' } as never,
      where: (qb, feed: string) => qb.where((eb: any) => eb.exists(eb.selectFrom('indicator_feeds').select('indicator_feeds.feed_id').whereRef('indicator_feeds.indicator_id', '=', 'indicators.id').where('indicator_feeds.feed_id', '=', String(feed).toLowerCase()))),
    },
  },
  search: ['indicators.value', 'indicators.name'],
  ordering: { created_at: 'indicators.created_at', last_seen: 'indicators.last_seen', first_seen: 'indicators.first_seen', value: 'indicators.value' },
  idColumn: 'indicators.id',
  createdColumn: 'indicators.created_at',
  updatedColumn: 'indicators.updated_at',
});
