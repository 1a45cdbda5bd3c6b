import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { pushTo } from '../../domain/collections.js';
import type { DigestItem } from '../../domain/notices.js';
import { type DomainEvent, readEvent, readEventData } from '../events/index.js';
import type { RecordedEvent } from '../hooks.js';
import { SEVERITIES } from '../incidents/index.js';
import { list } from './notifications.presenters.js';
import type { ChannelRow, MessageRow, NotificationsRepository } from './notifications.repository.js';

export const WINDOW_MS = 60_000;
const RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<string, number>;

/** The start of the minute `iso` falls in. */
export const windowOf = (iso: string) => new Date(Math.floor(Date.parse(iso) / WINDOW_MS) * WINDOW_MS).toISOString();

/** A channel's filters, read once for a batch of events: the JSON lists as sets. */
export function filterOf(channel: ChannelRow): (e: DomainEvent) => boolean {
  const events = new Set(list(channel.events));
  const monitors = new Set(list(channel.monitors));
  const tokens = new Set(list(channel.tracking_tokens));
  const minRank = channel.min_severity ? (RANK[channel.min_severity] ?? 0) : null;
  // Whether it takes this event: its type, then the severity, monitor and token filters.
  return (e) => {
    if (!events.has(e.type)) return false;
    const alert = e.type === 'alert.created' || e.type === 'alert.updated' ? e.data : null;
    const incident = e.type === 'incident.created' || e.type === 'incident.updated' ? e.data : null;
    const exposure = e.type === 'tracking_token.exposed' ? e.data : null;
    const matched = e.type === 'indicator.matched' ? e.data : null;
    const severity = (alert ?? incident ?? exposure ?? matched)?.severity;
    if (minRank !== null && severity && (RANK[severity] ?? -1) < minRank) return false;
    if (monitors.size && alert && !monitors.has(alert.monitor.id)) return false;
    if (tokens.size && exposure && !tokens.has(exposure.token)) return false;
    if (tokens.size && matched?.tracking_token && !tokens.has(matched.tracking_token)) return false;
    return true;
  };
}

/**
 * The minute window: each event a channel takes is a message of its own while the channel's
 * `per_minute` allowance lasts, and a place in the minute's digest after; when the minute ends, its
 * places become one digest message.
 */
export class NotificationsQueue {
  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'newId'>,
    private readonly repo: NotificationsRepository,
    /** Called when messages were queued: the sender's turn comes now, not at its next poll. */
    private readonly queued: () => void,
  ) {}

  /** The events.recorded hook: a message per (event, active channel that takes it), or a place in the minute's digest. */
  async enqueue(trx: Kysely<DB>, events: RecordedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const channels = await this.repo.activeChannels(trx, [...new Set(events.map((e) => e.organization_id))]);
    if (channels.length === 0) return;
    const rows: Array<Omit<MessageRow, 'attempts'>> = [];
    const read = events.map(readEvent);
    for (const channel of channels) {
      const takes = filterOf(channel);
      const byWindow = new Map<string, DomainEvent[]>();
      for (const e of read) {
        if (e.organization_id !== channel.organization_id || !takes(e)) continue;
        pushTo(byWindow, windowOf(e.created_at), e);
      }
      for (const [window, windowEvents] of byWindow) {
        const before = await this.repo.countIntoWindow(trx, channel.id, window, windowEvents.length);
        windowEvents.forEach((e, i) => {
          const own = before + i < Number(channel.per_minute);
          rows.push({ id: this.deps.newId(), channel_id: channel.id, event_type: e.type, event_id: e.id, data: null, window_start: window, status: own ? 'queued' : 'digest', next_attempt_at: e.created_at, last_error: null, created_at: e.created_at, sent_at: null });
        });
      }
    }
    await this.repo.insertMessages(trx, rows);
    if (rows.some((r) => r.status === 'queued')) this.queued();
  }

  /** For each minute that ended with events past the allowance: one digest message, in place of them. */
  async closeWindows(db: Kysely<DB>, now: Date): Promise<void> {
    const ended = new Date(now.getTime() - WINDOW_MS).toISOString();
    for (const w of await this.repo.closedWindows(db, ended)) {
      await db.transaction().execute(async (trx) => {
        const items = await this.repo.digestItems(trx, w.channel_id, w.window_start);
        if (items.length === 0) return;
        const data: DigestItem[] = items.map((i) => ({ event_type: i.event_type, data: readEventData(i.data) }));
        const at = new Date(Date.parse(w.window_start) + WINDOW_MS).toISOString();
        await this.repo.insertMessages(trx, [{ id: this.deps.newId(), channel_id: w.channel_id, event_type: 'digest', event_id: null, data: JSON.stringify(data), window_start: w.window_start, status: 'queued', next_attempt_at: at, last_error: null, created_at: at, sent_at: null }]);
        await this.repo.markDigested(trx, items.map((i) => i.id));
      });
    }
  }
}
