import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import type { AppHookRegistry, RecordedEvent } from '../hooks.js';
import { EventsRepository, type EventType } from './events.repository.js';
import type { Module } from '../module-parts.js';

export { EVENT_TYPES, type EventType } from './events.repository.js';

/**
 * What each event type carries: the resource as the API shows it. Each module that publishes events
 * adds its own here (declaration merging, beside its schemas), so the types come from the schemas
 * that already validate the resource, and a module that reads events needs only this one.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by the publishing modules
export interface EventPayloads {}

/** An event to record: its type, and the data that type carries. */
export type NewEvent = { [K in EventType]: { organizationId: string; type: K; data: EventPayloads[K] } }[EventType];

/** The transactional outbox, as modules record their events in it (see EventsRepository). */
export interface Outbox {
  record(trx: Kysely<DB>, events: readonly NewEvent[]): Promise<void>;
}

/** A recorded event read back, its data parsed: a union keyed by `type`. */
export type DomainEvent = { [K in EventType]: Omit<RecordedEvent, 'type' | 'data'> & { type: K; data: EventPayloads[K] } }[EventType];

/** An event as the outbox stored it, read as the union of the events there are (its data is what `record` was given). */
export function readEvent(e: RecordedEvent): DomainEvent {
  return { ...e, data: readEventData(e.data) } as DomainEvent;
}

/** An event's data as the outbox stored it (JSON text), where its type is read elsewhere. */
export function readEventData(data: string): DomainEvent['data'] {
  return JSON.parse(data) as DomainEvent['data'];
}

/** Domain events: the outbox every module records its events in, in the transaction of the change. */
export function createEventsModule(ctx: Pick<AppDeps, 'clock' | 'newId'> & { hooks: AppHookRegistry }) {
  const outbox: Outbox = new EventsRepository(ctx.clock, ctx.newId, ctx.hooks);
  return { name: 'events', outbox } as const satisfies Module;
}
