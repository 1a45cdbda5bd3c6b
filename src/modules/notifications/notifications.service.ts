import type { Kysely } from 'kysely';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { noticeOf } from '../../domain/notices.js';
import { notFound, validation } from '../../errors.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import { destinationUrl } from '../webhooks/index.js';
import { channelListing } from './notifications.lists.js';
import { maskTarget, presentChannel } from './notifications.presenters.js';
import { NotificationsQueue } from './notifications.queue.js';
import type { ChannelRow, NotificationsRepository } from './notifications.repository.js';
import { type ChannelCreate, type ChannelKind, type ChannelOut, type ChannelPatch, type ChannelTestResult, DEFAULT_PER_MINUTE } from './notifications.schemas.js';
import { baseUrl, NotificationsSender } from './notifications.sender.js';
import type { Transport } from './notifications.transport.js';

type Ctx = { p: Principal; ip: string };

const EMAIL = /^[^\s@,;<>]+@[^\s@,;<>]+\.[^\s@,;<>]+$/;

/**
 * Notifications: channels per organization (here), their messages queued in the transaction of
 * each event with the minute window (`queue`: notifications.queue.ts), and sent by a background job
 * with retries and health (`sender`: notifications.sender.ts).
 */
export class NotificationsService {
  readonly queue: NotificationsQueue;
  readonly sender: NotificationsSender;

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config' | 'metrics'>,
    private readonly repo: NotificationsRepository,
    private readonly transport: Transport,
    private readonly audit: AuditLog,
  ) {
    this.sender = new NotificationsSender(deps, repo, transport, audit);
    this.queue = new NotificationsQueue(deps, repo, () => this.sender.wake());
    this.sender.closes(this.queue);
  }

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
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
    const notice = noticeOf('alert.created', sample, { personalData: Boolean(row.personal_data), base: baseUrl(this.deps.config) });
    const out = await this.transport.deliver(row.kind as ChannelKind, row.target, { ...notice, title: `Test: ${notice.title}` });
    await this.sender.afterAttempt(row, out);
    return { delivered: out.ok, status_code: out.status_code, response: out.response, error: out.error, duration_ms: out.duration_ms };
  }
}
