import { Listing } from '../../db/listing.js';
import { toTimestamp } from '../../http/list-query.js';
import { CHANNELS, TOKEN_KINDS, TOKEN_STATUSES } from './tracking-tokens.schemas.js';

/** The tracking-token module's lists: the filters, search and orderings of each. */

const timeFilter = (op: '>=' | '<', name: string, description: string) =>
  ({
    kind: 'custom',
    schema: { type: 'string', format: 'date-or-date-time', description } as never,
    parse: (value: unknown) => toTimestamp(String(value), name),
    where: (qb: any, at: string) => qb.where('tracking_token_exposures.occurred_at', op, at),
  }) as const;

export const tokenListing = new Listing({
  filters: {
    kind: { kind: 'enum', column: 'tracking_tokens.kind', values: TOKEN_KINDS, description: 'Only tokens of these kinds.' },
    status: { kind: 'enum', column: 'tracking_tokens.status', values: TOKEN_STATUSES, description: 'Only tokens in these states.' },
  },
  search: ['tracking_tokens.name', 'tracking_tokens.memo'],
  ordering: {
    created_at: 'tracking_tokens.created_at',
    updated_at: 'tracking_tokens.updated_at',
    name: 'tracking_tokens.name',
    last_exposed_at: 'tracking_tokens.last_exposed_at',
    exposure_count: 'tracking_tokens.exposure_count',
  },
  idColumn: 'tracking_tokens.id',
  createdColumn: 'tracking_tokens.created_at',
  updatedColumn: 'tracking_tokens.updated_at',
});

export const exposureListing = new Listing({
  filters: {
    channel: { kind: 'enum', column: 'tracking_token_exposures.channel', values: CHANNELS, description: 'Only exposures through these channels.' },
    occurred_after: timeFilter('>=', 'occurred_after', 'Only exposures at or after this date or time.'),
    occurred_before: timeFilter('<', 'occurred_before', 'Only exposures before this date or time.'),
  },
  ordering: { occurred_at: 'tracking_token_exposures.occurred_at' },
  defaultOrdering: '-occurred_at',
  idColumn: 'tracking_token_exposures.id',
  createdColumn: 'tracking_token_exposures.occurred_at',
});
