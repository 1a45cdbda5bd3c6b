import type { AppDeps } from '../../deps.js';
import { pushTo } from '../../domain/collections.js';
import { type DigestItem, digestOf, type Notice, noticeOf } from '../../domain/notices.js';
import { JobLoop } from '../../runtime/jobs.js';
import type { AuditLog } from '../audit/index.js';
import { readEventData } from '../events/index.js';
import type { NotificationsQueue } from './notifications.queue.js';
import type { ChannelRow, MessageRow, NotificationsRepository } from './notifications.repository.js';
import type { ChannelKind } from './notifications.schemas.js';
import type { Outcome, Transport } from './notifications.transport.js';

/** Seconds after each failed attempt; a message is retried for 24 h from its event, then given up. */
export const RETRY_DELAYS_S = [10, 60, 300, 900, 3600, 7200, 14_400, 28_800] as const;
export const RETRY_FOR_MS = 24 * 3600 * 1000;
const LEASE_MS = 60_000;
const CLAIM = 50;
const POLL_MS = 1000;

/** Where messages link to: THREATMON_PUBLIC_URL, else this server. */
export const baseUrl = (config: AppDeps['config']) => config.publicUrl ?? `http://${config.host}:${config.port}`;

/**
 * The sending job: the digests of minutes that ended, then every message due, each channel's in
 * order, retried on failure for a day; each attempt counts in its channel's health.
 */
export class NotificationsSender {
  private readonly loop: JobLoop = new JobLoop(() => this.deliverDue(), 'notification sender failed; it goes on at its next turn', {
    pollMs: POLL_MS,
    // Hourly, messages that are done are pruned, as the webhooks' are (THREATMON_WEBHOOK_RETENTION).
    onTick: (tick) => {
      if (tick % Math.round(3_600_000 / POLL_MS) === 0) this.prune().catch((err) => this.loop.log?.error({ err }, 'notification pruning failed'));
    },
  });
  private queue?: NotificationsQueue;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'config' | 'metrics'>,
    private readonly repo: NotificationsRepository,
    private readonly transport: Transport,
    private readonly audit: AuditLog,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  /** The queue whose minutes it closes (they wake each other: see NotificationsQueue). */
  closes(queue: NotificationsQueue): void {
    this.queue = queue;
  }

  /** A turn now, not at the next poll: messages were queued. */
  wake(): void {
    this.loop.wake();
  }

  start(log: Parameters<JobLoop['start']>[0]) {
    this.loop.start(log);
  }

  async stop() {
    await this.loop.stop();
    this.transport.close();
  }

  /** One turn: the digests of minutes that ended, then every message due (tests call it with the clock moved). */
  async deliverDue(): Promise<void> {
    await this.queue?.closeWindows(this.db, this.deps.clock());
    for (;;) {
      const now = this.deps.clock();
      const claimed = await this.repo.claimDue(this.db, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString(), CLAIM);
      if (claimed.length === 0) return;
      const channels = new Map((await this.repo.channelsByIds(this.db, [...new Set(claimed.map((m) => m.channel_id))])).map((c) => [c.id, c]));
      const eventData = await this.repo.eventData(this.db, [...new Set(claimed.flatMap((m) => (m.event_id ? [m.event_id] : [])))]);
      // Each channel's messages in order; channels side by side.
      const byChannel = new Map<string, MessageRow[]>();
      for (const m of claimed) pushTo(byChannel, m.channel_id, m);
      await Promise.all(
        [...byChannel].map(async ([channelId, messages]) => {
          for (const m of messages) await this.sendOne(channels.get(channelId), m, eventData);
        }),
      );
      if (claimed.length < CLAIM) return;
    }
  }

  private noticeFor(channel: ChannelRow, m: MessageRow, data: string): Notice {
    const options = { personalData: Boolean(channel.personal_data), base: baseUrl(this.deps.config) };
    if (m.event_type === 'digest') return digestOf(JSON.parse(data) as DigestItem[], { ...options, windowStart: m.window_start });
    return noticeOf(m.event_type, readEventData(data), options);
  }

  private async sendOne(channel: ChannelRow | undefined, m: MessageRow, eventData: ReadonlyMap<string, string>): Promise<void> {
    // A channel deleted meanwhile took its messages with it; one disabled keeps them for later.
    if (!channel) return;
    if (!channel.is_active) {
      await this.repo.settleMessage(this.db, m.id, { next_attempt_at: new Date(this.deps.clock().getTime() + LEASE_MS).toISOString() });
      return;
    }
    const data = m.data ?? eventData.get(m.event_id ?? '');
    // Its event pruned from the outbox (kept THREATMON_WEBHOOK_RETENTION, days past the 24 h of retries).
    if (data === undefined) {
      await this.repo.settleMessage(this.db, m.id, { status: 'given_up', last_error: 'its event is no longer kept' });
      return;
    }
    const out = await this.transport.deliver(channel.kind as ChannelKind, channel.target, this.noticeFor(channel, m, data));
    const at = this.now();
    if (out.ok) {
      await this.repo.settleMessage(this.db, m.id, { status: 'sent', sent_at: at, last_error: null });
      this.deps.metrics.notifications.inc({ kind: channel.kind, outcome: 'sent' });
    } else {
      const next = Date.parse(at) + (RETRY_DELAYS_S[Number(m.attempts) - 1] ?? RETRY_DELAYS_S.at(-1)!) * 1000;
      const givenUp = next > Date.parse(m.created_at) + RETRY_FOR_MS;
      await this.repo.settleMessage(this.db, m.id, givenUp ? { status: 'given_up', last_error: out.error } : { next_attempt_at: new Date(next).toISOString(), last_error: out.error });
      this.deps.metrics.notifications.inc({ kind: channel.kind, outcome: givenUp ? 'given_up' : 'retried' });
      if (givenUp) {
        await this.audit.record(this.db, { organizationId: channel.organization_id, actorId: null, ip: null, action: 'notification.given_up', targetType: 'notification_channel', targetId: channel.id, changes: { event_type: m.event_type, attempts: Number(m.attempts), error: out.error } });
      }
    }
    await this.afterAttempt(channel, out);
  }

  /** The channel's health; its first failure after a success is audited (each failure counts in /metrics). */
  async afterAttempt(channel: ChannelRow, out: Outcome): Promise<void> {
    const failures = await this.repo.recordOutcome(this.db, channel.id, out.ok, this.now(), out.error);
    if (!out.ok && failures === 1) {
      await this.audit.record(this.db, { organizationId: channel.organization_id, actorId: null, ip: null, action: 'notification_channel.failing', targetType: 'notification_channel', targetId: channel.id, changes: { error: out.error, status_code: out.status_code } });
    }
  }

  /** Messages done before the retention (THREATMON_WEBHOOK_RETENTION) are removed; those still to send stay. */
  async prune(): Promise<void> {
    await this.repo.prune(this.db, new Date(this.deps.clock().getTime() - this.deps.config.deliveryRetentionSeconds * 1000).toISOString());
  }

  /** A channel's messages by status (tests, figures). */
  countByStatus(channelId: string) {
    return this.repo.countByStatus(this.db, channelId);
  }
}
