import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppHooks } from '../hooks.js';
import type { Hooks } from '../../runtime/hooks.js';

/** The types of domain event, as webhooks subscribe to them (API.md section 7). */
export const EVENT_TYPES = ['alert.created', 'alert.updated', 'incident.created', 'incident.updated', 'ioc.created', 'ioc.updated', 'ioc.deleted', 'tracking_token.exposed', 'monitor.scan_completed', 'indicator.matched'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * The transactional outbox: modules record their domain events here, in the transaction of the
 * change itself, so an event exists exactly when its change committed (never lost by a crash,
 * never sent for a change rolled back). Every module that takes part in an event's transaction
 * subscribes to `events.recorded`: webhooks queue its deliveries, notifications its messages, TAXII
 * its STIX versions.
 */
export class EventsRepository {
  constructor(
    private readonly clock: () => Date,
    private readonly newId: () => string,
    private readonly hooks: Hooks<Pick<AppHooks, 'events.recorded'>>,
  ) {}

  async record(trx: Kysely<DB>, events: ReadonlyArray<{ organizationId: string; type: EventType; data: unknown }>): Promise<void> {
    if (events.length === 0) return;
    const at = this.clock().toISOString();
    const rows = events.map((e) => ({ id: this.newId(), organization_id: e.organizationId, type: e.type, data: JSON.stringify(e.data), created_at: at }));
    for (let i = 0; i < rows.length; i += 500) await trx.insertInto('events').values(rows.slice(i, i + 500)).execute();
    for (const hook of this.hooks.of('events.recorded')) await hook(trx, rows);
  }
}
