import type { AppDeps } from '../../deps.js';
import type { AppHookRegistry } from '../hooks.js';
import { Outbox } from './events.repository.js';

export { EVENT_TYPES, type EventType, type NewEvent, Outbox } from './events.repository.js';

/** Domain events: the outbox every module records its events in, in the transaction of the change. */
export function createEventsModule(ctx: Pick<AppDeps, 'clock' | 'newId'> & { hooks: AppHookRegistry }) {
  return { name: 'events', outbox: new Outbox(ctx.clock, ctx.newId, ctx.hooks) } as const;
}
