import type { Kysely } from 'kysely';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { pushTo } from '../../domain/collections.js';
import { type DigestItem, digestOf, type Notice, noticeOf } from '../../domain/notices.js';
import { notFound, validation } from '../../errors.js';
import { JobLoop } from '../../runtime/jobs.js';
import { type AuditLog, diff } from '../audit/index.js';
import { type DomainEvent, readEvent, readEventData } from '../events/index.js';
import type { RecordedEvent } from '../hooks.js';
import type { Principal } from '../identity/index.js';
import { SEVERITIES } from '../incidents/index.js';
import { destinationUrl } from '../webhooks/index.js';
import { channelListing } from './notifications.lists.js';
import type { ChannelRow, MessageRow, NotificationsRepository } from './notifications.repository.js';
import { type ChannelCreate, type ChannelKind, type ChannelOut, type ChannelPatch, type ChannelTestResult, DEFAULT_PER_MINUTE } from './notifications.schemas.js';
import type { Outcome, Transport } from './notifications.transport.js';

type Ctx = { p: Principal; ip: string };

const WINDOW_MS = 60_000;
/** Seconds after each failed attempt; a message is retried for 24 h from its event, then given up. */
export const RETRY_DELAYS_S = [10, 60, 300, 900, 3600, 7200, 14_400, 28_800] as const;
export const RETRY_FOR_MS = 24 * 3600 * 1000;
const LEASE_MS = 60_000;
const CLAIM = 50;
const POLL_MS = 1000;
const RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<string, number>;
const EMAIL = /^[^\s@,;<>]+@[^\s@,;<>]+\.[^\s@,;<>]+$/;

const list = (json: string) => JSON.parse(json) as string[];
/** The start of the minute `iso` falls in. */
export const windowOf = (iso: string) => new Date(Math.floor(Date.parse(iso) / WINDOW_MS) * WINDOW_MS).toISOString();

/** An incoming-webhook URL shown after its creation: scheme and host, and its last 4 characters. */
export function maskTarget(kind: string, target: string): string {
  if (kind === 'email') return target;
  try {
    const u = new URL(target);
    return `${u.protocol}//${u.host}/…${target.slice(-4)}`;
  } catch {
    return '…';
  }
}

export function presentChannel(r: ChannelRow, revealTarget = false): ChannelOut {
  const active = Boolean(r.is_active);
  const failures = Number(r.consecutive_failures);
  return {
    id: r.id,
    kind: r.kind as ChannelKind,
    name: r.name,
    target: revealTarget ? r.target : maskTarget(r.kind, r.target),
    events: list(r.events),
    min_severity: r.min_severity as ChannelOut['min_severity'],
    monitors: list(r.monitors),
    tracking_tokens: list(r.tracking_tokens),
    personal_data: Boolean(r.personal_data),
    per_minute: Number(r.per_minute),
    is_active: active,
    status: !active ? 'disabled' : failures > 0 ? 'failing' : 'healthy',
    last_success_at: r.last_success_at,
    last_failure_at: r.last_failure_at,
    last_error: r.last_error,
    consecutive_failures: failures,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

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
    const severity = (alert ?? incident)?.severity;
    if (minRank !== null && severity && (RANK[severity] ?? -1) < minRank) return false;
    if (monitors.size && alert && !monitors.has(alert.monitor.id)) return false;
    if (tokens.size && e.type === 'tracking_token.exposed' && !tokens.has(e.data.token)) return false;
    return true;
  };
}

/**
 * Notifications: channels per organization, and their messages, queued in the transaction of each
 * event (events.recorded) and sent by a background job with retries; past a channel's per-minute
 * allowance, the minute's later events go into one digest sent when the minute ends.
 */
export class NotificationsService {
  private readonly loop: JobLoop = new JobLoop(() => this.deliverDue(), 'notification sender failed; it goes on at its next turn', {
    pollMs: POLL_MS,
    // Hourly, messages that are done are pruned, as the webhooks' are (THREATMON_WEBHOOK_RETENTION).
    onTick: (tick) => {
      if (tick % Math.round(3_600_000 / POLL_MS) === 0) this.prune().catch((err) => this.loop.log?.error({ err }, 'notification pruning failed'));
    },
  });

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'metrics'>,
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

  private get base() {
    return this.deps.config.publicUrl ?? `http://${this.deps.config.host}:${this.deps.config.port}`;
  }

  // --- channels ---

  /** A target the kind takes: addresses for e-mail, else an http(s) URL to a host allowed as a webhook's is. */
  private async checkTarget(kind: string, raw: string): Promise<string> {
    if (kind === 'email') {
      const addresses = raw.split(',').map((a) => a.trim()).filter(Boolean);
      if (addresses.length === 0 || addresses.length > 20 || !addresses.every((a) => EMAIL.test(a))) {
        throw validation([{ field: 'target', message: 'must be 1 to 20 e-mail addresses, comma-separated' }]);
      }
      return addresses.join(', ');
    }
    return destinationUrl(raw, this.deps.config.allowPrivateDestinations, 'target');
  }

  list(p: Principal, params: ListParams): Promise<ListResult<ChannelOut>> {
    const qb = channelListing.filter(this.repo.selectChannels(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return channelListing.page(qb, params, (r: ChannelRow) => presentChannel(r));
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<ChannelRow> {
    const row = await this.repo.findChannel(db, p.organization.id, id);
    if (!row) throw notFound('No such notification channel.');
    return row;
  }

  async create(ctx: Ctx, body: ChannelCreate): Promise<ChannelRow> {
    const target = await this.checkTarget(body.kind, body.target);
    const at = this.now();
    const id = this.deps.newId();
    return this.db.transaction().execute(async (trx) => {
      await this.repo.insertChannel(trx, {
        id,
        organization_id: ctx.p.organization.id,
        kind: body.kind,
        name: body.name,
        target,
        events: JSON.stringify(body.events),
        min_severity: body.min_severity ?? null,
        monitors: JSON.stringify((body.monitors ?? []).map((m) => m.toLowerCase())),
        tracking_tokens: JSON.stringify((body.tracking_tokens ?? []).map((m) => m.toLowerCase())),
        personal_data: body.personal_data ?? false,
        per_minute: body.per_minute ?? DEFAULT_PER_MINUTE,
        is_active: body.is_active ?? true,
        window_start: null,
        last_success_at: null,
        last_failure_at: null,
        last_error: null,
        created_by: ctx.p.user.id,
        created_at: at,
        updated_at: at,
      });
      // The target is a secret: the audit log names the kind and the host only.
      await this.audit.recordAs(trx, ctx, { action: 'notification_channel.created', targetType: 'notification_channel', targetId: id, changes: { name: body.name, kind: body.kind, target: maskTarget(body.kind, target), events: body.events } });
      return this.get(ctx.p, id, trx);
    });
  }

  async update(ctx: Ctx, id: string, patch: ChannelPatch, assertVersion: (v: number) => void): Promise<ChannelRow> {
    const current = await this.get(ctx.p, id);
    const target = patch.target === undefined ? undefined : await this.checkTarget(current.kind, patch.target);
    return this.db.transaction().execute(async (trx) => {
      const row = await this.get(ctx.p, id, trx);
      assertVersion(Number(row.version));
      const before = presentChannel(row, true);
      const changes = diff(before, { ...patch, ...(target !== undefined && { target }) });
      if (Object.keys(changes).length === 0) return row;
      await this.repo.updateChannel(trx, id, {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(target !== undefined && { target }),
        ...(patch.events !== undefined && { events: JSON.stringify(patch.events) }),
        ...(patch.min_severity !== undefined && { min_severity: patch.min_severity }),
        ...(patch.monitors !== undefined && { monitors: JSON.stringify(patch.monitors.map((m) => m.toLowerCase())) }),
        ...(patch.tracking_tokens !== undefined && { tracking_tokens: JSON.stringify(patch.tracking_tokens.map((m) => m.toLowerCase())) }),
        ...(patch.personal_data !== undefined && { personal_data: patch.personal_data }),
        ...(patch.per_minute !== undefined && { per_minute: patch.per_minute }),
        ...(patch.is_active !== undefined && { is_active: patch.is_active }),
        // Enabled again: its failures start over.
        ...(patch.is_active === true && !row.is_active && { consecutive_failures: 0 }),
        updated_at: this.now(),
      });
      if (changes.target) changes.target = { from: maskTarget(row.kind, row.target), to: maskTarget(row.kind, target!) };
      await this.audit.recordAs(trx, ctx, { action: 'notification_channel.updated', targetType: 'notification_channel', targetId: id, changes });
      return this.get(ctx.p, id, trx);
    });
  }

  async remove(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await this.get(ctx.p, id, trx);
      await this.repo.deleteChannel(trx, id);
      await this.audit.recordAs(trx, ctx, { action: 'notification_channel.deleted', targetType: 'notification_channel', targetId: id, changes: { name: row.name, kind: row.kind } });
    });
  }

  /** POST .../test/: a sample alert, sent now, as the channel would send it; answers what the target said. */
  async test(ctx: Ctx, id: string): Promise<ChannelTestResult> {
    const row = await this.get(ctx.p, id);
    const sample = {
      id: '00000000-0000-4000-8000-000000000000',
      monitor: { id: '00000000-0000-4000-8000-000000000001', name: 'Sample monitor' },
      severity: 'high',
      status: 'new',
      matched_term: 'example.com',
      matched_field: 'domain',
      leak_record: { email: 'jane.doe@example.com', ip: '192.0.2.1', password_masked: 'h*****2', source: { name: 'Sample breach' } },
      created_at: this.now(),
      updated_at: this.now(),
    };
    const notice = noticeOf('alert.created', sample, { personalData: Boolean(row.personal_data), base: this.base });
    const out = await this.transport.deliver(row.kind as ChannelKind, row.target, { ...notice, title: `Test: ${notice.title}` });
    await this.afterAttempt(row, out);
    return { delivered: out.ok, status_code: out.status_code, response: out.response, error: out.error, duration_ms: out.duration_ms };
  }

  // --- queueing ---

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
    if (rows.some((r) => r.status === 'queued')) this.loop.wake();
  }

  // --- sending ---

  start(log: Parameters<JobLoop['start']>[0]) {
    this.loop.start(log);
  }

  async stop() {
    await this.loop.stop();
    this.transport.close();
  }

  /** One turn: the digests of minutes that ended, then every message due (tests call it with the clock moved). */
  async deliverDue(): Promise<void> {
    await this.closeWindows();
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

  /** For each minute that ended with events past the allowance: one digest message, in place of them. */
  private async closeWindows(): Promise<void> {
    const ended = new Date(this.deps.clock().getTime() - WINDOW_MS).toISOString();
    for (const w of await this.repo.closedWindows(this.db, ended)) {
      await this.db.transaction().execute(async (trx) => {
        const items = await this.repo.digestItems(trx, w.channel_id, w.window_start);
        if (items.length === 0) return;
        const data: DigestItem[] = items.map((i) => ({ event_type: i.event_type, data: readEventData(i.data) }));
        const at = new Date(Date.parse(w.window_start) + WINDOW_MS).toISOString();
        await this.repo.insertMessages(trx, [{ id: this.deps.newId(), channel_id: w.channel_id, event_type: 'digest', event_id: null, data: JSON.stringify(data), window_start: w.window_start, status: 'queued', next_attempt_at: at, last_error: null, created_at: at, sent_at: null }]);
        await this.repo.markDigested(trx, items.map((i) => i.id));
      });
    }
  }

  private noticeFor(channel: ChannelRow, m: MessageRow, data: string): Notice {
    const options = { personalData: Boolean(channel.personal_data), base: this.base };
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
  private async afterAttempt(channel: ChannelRow, out: Outcome): Promise<void> {
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
