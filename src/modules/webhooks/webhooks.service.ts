import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { notFound } from '../../http/errors.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import { deliveryListing, webhookListing } from './webhooks.lists.js';
import { type JobLog, JobLoop } from '../../runtime/jobs.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import type { RecordedEvent } from '../hooks.js';
import type { MessageRow, WebhookRow, WebhooksRepository } from './webhooks.repository.js';
import type { WebhookCreate, WebhookOut, WebhookPatch } from './webhooks.schemas.js';
import { type SendResult, send, sign } from './webhooks.sender.js';
import { destinationUrl } from './webhooks.ssrf.js';
import { presentWebhook } from './webhooks.presenters.js';

type Ctx = { p: Principal; ip: string };

/** Seconds to wait after each failed attempt: 8 attempts over about 27 hours (Standard Webhooks' usual schedule). */
export const RETRY_DELAYS_S = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1;
/** Consecutive failures after which a webhook is disabled. */
export const DISABLE_AFTER = 50;
const GLOBAL_CONCURRENCY = 128;
const PER_WEBHOOK_CONCURRENCY = 16;
/** Webhook queues read by one claim (one indexed read each); the next claim starts where it stopped. */
const MAX_QUEUES_PER_CLAIM = 64;
/** Longer than a delivery can take (10 s): a claimed message whose worker died is taken again after it. */
const LEASE_MS = 60_000;
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
const CLAIM_GAP_MS = 25;
const POLL_MS = 200;
/** Outcomes are written together, at most this long after the first of them. */
const FLUSH_DELAY_MS = 10;

export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** A retry's delay: the schedule's, with up to 10% of jitter either way so that failures spread out. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = (RETRY_DELAYS_S[attempt - 1] ?? 36_000) * 1000;
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** The body sent for an event: {id, type, timestamp, data}, data as the API shows the resource. */
const bodyOf = (e: RecordedEvent) => `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(e.created_at)},"data":${e.data}}`;

/** Webhooks: an organization's subscriptions to its events, and their delivery. */
export class WebhooksService {
  private readonly loop = new JobLoop(() => this.deliverDue(), 'webhook delivery worker failed; it goes on at its next turn', {
    pollMs: POLL_MS,
    onTick: (tick) => {
      // Every 5 s the queue depth for /metrics; every hour, pruning.
      if (tick % 25 === 0) this.repo.queueDepth(this.db).then((n) => this.deps.metrics.webhookQueue.set(n), () => undefined);
      if (tick % Math.round(3_600_000 / POLL_MS) === 0) this.prune().catch((err) => this.loop.log?.error({ err }, 'webhook pruning failed'));
    },
    // A wake during a turn: a waiting turn looks for new messages at once.
    onWake: () => this.slotFreed?.(),
  });
  private readonly inflight = new Map<string, number>();
  private claims = 0;
  private active = 0;
  private slotFreed?: () => void;
  /** Finished deliveries whose outcome is not written yet (see flushResults). */
  private readonly results: Array<{ m: MessageRow; r: SendResult; at: string }> = [];
  private flushing?: Promise<void>;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'metrics'>,
    private readonly repo: WebhooksRepository,
    private readonly audit: AuditLog,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  /** A URL that can be a destination: http(s), and (unless allowed) only public addresses. */
  private checkUrl(url: string): Promise<string> {
    return destinationUrl(url, this.deps.config.allowPrivateDestinations, 'url');
  }

  list(p: Principal, params: ListParams): Promise<ListResult<WebhookOut>> {
    const qb = webhookListing.filter(this.repo.selectWebhooks(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return webhookListing.page(qb, params, (r: WebhookRow) => presentWebhook(r));
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<WebhookRow> {
    const row = await this.repo.find(db, p.organization.id, id);
    if (!row) throw notFound('No such webhook.');
    return row;
  }

  async create(ctx: Ctx, body: WebhookCreate): Promise<{ row: WebhookRow; secret: string }> {
    const url = await this.checkUrl(body.url);
    const secret = newSecret();
    const row = await this.db.transaction().execute(async (trx) => {
      const at = this.now();
      const id = this.deps.newId();
      await this.repo.insert(trx, {
        id,
        organization_id: ctx.p.organization.id,
        url,
        events: JSON.stringify(body.events),
        description: body.description ?? '',
        is_active: body.is_active ?? true,
        secret,
        previous_secret: null,
        previous_secret_until: null,
        last_delivery_at: null,
        created_by: ctx.p.user.id,
        created_at: at,
        updated_at: at,
      });
      // Never the secret: the audit log names the webhook and where it points.
      await this.audit.recordAs(trx, ctx, { action: 'webhook.created', targetType: 'webhook', targetId: id, changes: { url, events: body.events } });
      return this.get(ctx.p, id, trx);
    });
    return { row, secret };
  }

  async update(ctx: Ctx, id: string, patch: WebhookPatch, assertVersion: (v: number) => void): Promise<WebhookRow> {
    const url = patch.url === undefined ? undefined : await this.checkUrl(patch.url);
    return this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      assertVersion(current.version);
      const next = { ...patch, ...(url !== undefined && { url }) };
      const changes = diff(presentWebhook(current), next);
      if (Object.keys(changes).length === 0) return current;
      const reactivated = next.is_active === true && !current.is_active;
      await this.repo.update(trx, id, {
        ...(next.url !== undefined && { url: next.url }),
        ...(next.events !== undefined && { events: JSON.stringify(next.events) }),
        ...(next.description !== undefined && { description: next.description }),
        ...(next.is_active !== undefined && { is_active: next.is_active }),
        ...(reactivated && { failure_count: 0 }),
        updated_at: this.now(),
      });
      await this.audit.recordAs(trx, ctx, { action: 'webhook.updated', targetType: 'webhook', targetId: id, changes });
      return this.get(ctx.p, id, trx);
    });
  }

  async remove(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      await this.repo.remove(trx, id);
      await this.audit.recordAs(trx, ctx, { action: 'webhook.deleted', targetType: 'webhook', targetId: id, changes: { url: current.url } });
    });
  }

  /** A new secret; the previous one keeps signing (a second signature) for 24 hours. */
  async rotate(ctx: Ctx, id: string): Promise<{ row: WebhookRow; secret: string }> {
    const secret = newSecret();
    const row = await this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      const until = new Date(this.deps.clock().getTime() + ROTATION_OVERLAP_MS).toISOString();
      await this.repo.update(trx, id, { secret, previous_secret: current.secret, previous_secret_until: until, updated_at: this.now() });
      await this.audit.recordAs(trx, ctx, { action: 'webhook.secret_rotated', targetType: 'webhook', targetId: id, changes: { previous_secret_until: until } });
      return this.get(ctx.p, id, trx);
    });
    return { row, secret };
  }

  async deliveries(p: Principal, id: string, params: ListParams) {
    await this.get(p, id);
    const qb = deliveryListing.filter(this.repo.selectAttempts(this.db, id), params, { dialect: this.deps.database.dialect });
    return deliveryListing.page(qb, params, (r: { id: string; event_id: string; event_type: string; attempt: number; status_code: number | null; duration_ms: number; error: string | null; created_at: string }) => ({
      id: r.id,
      event_id: r.event_id,
      event_type: r.event_type,
      attempt: Number(r.attempt),
      status_code: r.status_code === null ? null : Number(r.status_code),
      duration_ms: Number(r.duration_ms),
      error: r.error,
      created_at: r.created_at,
    }));
  }

  /** The secrets that sign now: the current one, and the previous one during a rotation. */
  private secretsOf(w: WebhookRow): string[] {
    const previous = w.previous_secret && w.previous_secret_until && w.previous_secret_until > this.now() ? [w.previous_secret] : [];
    return [w.secret, ...previous];
  }

  private async post(w: WebhookRow, eventId: string, body: string): Promise<SendResult> {
    const at = this.deps.clock();
    const headers = { 'webhook-id': eventId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': sign(this.secretsOf(w), eventId, at, body) };
    return send(w.url, headers, body, this.deps.config.allowPrivateDestinations);
  }

  /** POST /webhooks/<id>/test/: a ping sent now, logged, never counted as a failure. */
  async test(p: Principal, id: string): Promise<{ delivered: boolean; status_code: number | null; duration_ms: number }> {
    const w = await this.get(p, id);
    const eventId = this.deps.newId();
    const at = this.now();
    const r = await this.post(w, eventId, JSON.stringify({ id: eventId, type: 'ping', timestamp: at, data: { webhook: w.id } }));
    await this.repo.logAttempt(this.db, { id: this.deps.newId(), webhook_id: w.id, event_id: eventId, event_type: 'ping', attempt: 1, status_code: r.status_code, duration_ms: r.duration_ms, error: r.error, created_at: this.now() });
    return { delivered: r.ok, status_code: r.status_code, duration_ms: r.duration_ms };
  }

  /** The events.recorded hook: a message per (event, active webhook of its organization subscribed to it), in the event's transaction. */
  async queue(trx: Kysely<DB>, events: RecordedEvent[]): Promise<void> {
    const orgs = [...new Set(events.map((e) => e.organization_id))];
    const hooks = await this.repo.activeFor(trx, orgs);
    if (hooks.length === 0) return;
    const subscribed = hooks.map((h) => ({ ...h, events: new Set(JSON.parse(h.events) as string[]) }));
    const at = this.now();
    const rows = events.flatMap((e) =>
      subscribed
        .filter((h) => h.organization_id === e.organization_id && h.events.has(e.type))
        .map((h) => ({ id: this.deps.newId(), webhook_id: h.id, event_id: e.id, event_type: e.type, body: bodyOf(e), status: 'pending', next_attempt_at: at, lease_until: null, created_at: at, finished_at: null })),
    );
    await this.repo.insertMessages(trx, rows);
    if (rows.length) setImmediate(() => this.wake());
  }

  // --- the delivery worker ---

  /** Delivers every message due now, in parallel within the bounds; resolves when none is due or in flight. */
  async deliverDue(): Promise<void> {
    const running = new Set<Promise<void>>();
    for (;;) {
      if (this.loop.stopping) break;
      const claimed = await this.claim();
      const hooks = new Map((claimed.length ? await this.repo.byIds(this.db, [...new Set(claimed.map((m) => m.webhook_id))]) : []).map((w) => [w.id, w]));
      for (const m of claimed) {
        const w = hooks.get(m.webhook_id);
        if (!w) continue;
        // Never past the bound: the claim asked for each webhook's room alone.
        this.inflight.set(m.webhook_id, (this.inflight.get(m.webhook_id) ?? 0) + 1);
        this.active++;
        const job = this.deliver(m, w)
          .catch((err) => this.loop.log?.error({ err }, 'webhook delivery failed unexpectedly; it will be retried'))
          .finally(() => {
            this.active--;
            const left = (this.inflight.get(m.webhook_id) ?? 1) - 1;
            if (left) this.inflight.set(m.webhook_id, left);
            else this.inflight.delete(m.webhook_id);
            running.delete(job);
            this.slotFreed?.();
          });
        running.add(job);
      }
      if (running.size === 0) break;
      // Claims are writes: at most one per CLAIM_GAP_MS, and only once a slot is free, so that the
      // worker never crowds the API's own writes (under load, deliveries queue instead).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          if (this.active < GLOBAL_CONCURRENCY) resolve();
          else this.slotFreed = resolve;
        }, CLAIM_GAP_MS);
        this.slotFreed = () => {
          if (this.loop.stopping) {
            clearTimeout(timer);
            resolve();
          }
        };
      });
    }
    await Promise.all(running);
  }

  /**
   * Due messages for the free slots: each active webhook below its bound gets up to its room, in
   * turn (the starting webhook moves each claim, so that with more webhooks than slots all are served).
   */
  private async claim(): Promise<MessageRow[]> {
    let room = GLOBAL_CONCURRENCY - this.active;
    if (room <= 0) return [];
    const ids = await this.repo.activeIds(this.db);
    const rooms: Array<{ webhookId: string; room: number }> = [];
    const start = ids.length ? this.claims++ % ids.length : 0;
    for (let i = 0; i < ids.length && room > 0 && rooms.length < MAX_QUEUES_PER_CLAIM; i++) {
      const webhookId = ids[(start + i) % ids.length]!;
      const free = Math.min(room, PER_WEBHOOK_CONCURRENCY - (this.inflight.get(webhookId) ?? 0));
      if (free <= 0) continue;
      rooms.push({ webhookId, room: free });
      room -= free;
    }
    return this.repo.claim(this.db, this.now(), new Date(this.deps.clock().getTime() + LEASE_MS).toISOString(), rooms);
  }

  private async deliver(m: MessageRow, w: WebhookRow): Promise<void> {
    const r = await this.post(w, m.event_id, m.body);
    this.results.push({ m, r, at: this.now() });
    this.flushing ??= new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS))
      .then(() => this.flushResults())
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /**
   * Writes the outcomes of finished deliveries, all those waiting in one transaction: under load,
   * one commit stands for many deliveries instead of one each (SQLite has one writer for the API
   * and this worker alike).
   */
  private async flushResults(): Promise<void> {
    while (this.results.length) {
      const batch = this.results.splice(0);
      await this.db.transaction().execute(async (trx) => {
        await this.repo.logAttempts(
          trx,
          batch.map(({ m, r, at }) => ({ id: this.deps.newId(), webhook_id: m.webhook_id, event_id: m.event_id, event_type: m.event_type, attempt: m.attempts + 1, status_code: r.status_code, duration_ms: r.duration_ms, error: r.error, created_at: at })),
        );
        const ok = batch.filter((b) => b.r.ok);
        if (ok.length) await this.repo.delivered(trx, ok.map((b) => b.m), this.now());
        for (const { m, at } of batch.filter((b) => !b.r.ok)) {
          const attempt = m.attempts + 1;
          const retryAt = attempt < MAX_ATTEMPTS ? new Date(this.deps.clock().getTime() + retryDelayMs(attempt)).toISOString() : null;
          await this.repo.failed(trx, m, at, retryAt, DISABLE_AFTER);
        }
      });
      for (const { m, r, at } of batch) {
        if (r.ok) {
          this.deps.metrics.webhookDeliveries.inc({ outcome: 'sent' });
          this.deps.metrics.webhookLatency.observe(Math.max(0, (Date.parse(at) - Date.parse(m.created_at)) / 1000));
        } else {
          this.deps.metrics.webhookDeliveries.inc({ outcome: m.attempts + 1 < MAX_ATTEMPTS ? 'retried' : 'failed' });
        }
      }
    }
  }

  /** Deletes finished messages, attempts and outbox events older than the retention period. */
  async prune(): Promise<void> {
    await this.repo.prune(this.db, new Date(this.deps.clock().getTime() - this.deps.config.deliveryRetentionSeconds * 1000).toISOString());
  }

  start(log: JobLog): void {
    this.loop.start(log);
  }

  wake(): void {
    this.loop.wake();
  }

  /** Stops taking messages and waits for the deliveries in flight. */
  stop(): Promise<void> {
    return this.loop.stop();
  }
}
