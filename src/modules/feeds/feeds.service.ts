import type { Kysely } from 'kysely';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import { notFound, validation } from '../../errors.js';
import { type AuditLog, diff } from '../audit/index.js';
import { mayLeave } from '../../domain/stix.js';
import type { NewEvent, Outbox } from '../events/index.js';
import type { IndicatorMatch, IngestedRecords, IocIntel, Observed } from '../hooks.js';
import type { Principal } from '../identity/index.js';
import { destinationUrl } from '../webhooks/index.js';
import { feedListing, indicatorListing } from './feeds.lists.js';
import { type FeedRow, type IndicatorRow, maskAuth, presentFeed, presentIndicator } from './feeds.presenters.js';
import { FeedPuller } from './feeds.pull.js';
import { readStixObjects } from './feeds.read.js';
import type { FeedsRepository } from './feeds.repository.js';
import { CidrRanges, matchIndicators } from './feeds.match.js';
import type { FeedCorpus } from './feeds.hibp.js';
import { DEFAULT_INTERVAL, type IndicatorMatchOut, type FeedCreate, type FeedOut, type FeedPatch, type IndicatorOut, type IndicatorPatch } from './feeds.schemas.js';

type Ctx = { p: Principal; ip: string };
/** The kind-specific fields, kept in a feed's options. */
const OPTIONS = ['column', 'type', 'collections', 'format'] as const;

/**
 * Feeds of an organization (here), pulled in the background (`puller`: feeds.pull.ts), and the
 * indicators they bring: listed and searched, read-only but for a false-positive flag and a note.
 */
export class FeedsService {
  readonly puller: FeedPuller;
  private readonly cidrs = new CidrRanges();

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'config'>,
    private readonly repo: FeedsRepository,
    private readonly audit: AuditLog,
    private readonly outbox: Outbox,
    corpus?: FeedCorpus,
  ) {
    this.puller = new FeedPuller(deps, repo, corpus);
  }

  private get db() {
    return this.deps.database.db;
  }

  private now() {
    return this.deps.clock().toISOString();
  }

  /** A kind's own fields given to another kind are refused (400), not ignored. */
  private checkOptions(kind: string, options: { column?: unknown; type?: unknown; collections?: unknown; format?: unknown }) {
    const own: Record<(typeof OPTIONS)[number], string[]> = { column: ['csv', 'misp'], type: ['csv', 'misp'], collections: ['taxii2'], format: ['misp'] };
    const wrong = OPTIONS.filter((f) => options[f] !== undefined && options[f] !== null && !own[f].includes(kind));
    if (wrong.length) throw validation(wrong.map((field) => ({ field, message: `is for ${own[field].join(' and ')} feeds only` })));
  }

  list(p: Principal, params: ListParams): Promise<ListResult<FeedOut>> {
    const qb = feedListing.filter(this.repo.selectFeeds(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    return feedListing.page(qb, params, (r: FeedRow) => presentFeed(r));
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<FeedRow> {
    const row = await this.repo.findFeed(db, p.organization.id, id);
    if (!row) throw notFound('No such feed.');
    return row;
  }

  async create(ctx: Ctx, body: FeedCreate): Promise<FeedRow> {
    this.checkOptions(body.kind, body);
    // A stix feed may be given its bundles by upload only: no URL, never pulled.
    if (body.url === undefined && body.kind !== 'stix') throw validation([{ field: 'url', message: `is required for ${body.kind} feeds` }]);
    const url = body.url === undefined ? '' : await destinationUrl(body.url, this.deps.config.allowPrivateDestinations, 'url');
    const at = this.now();
    const id = this.deps.newId();
    const options = Object.fromEntries(OPTIONS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
    const row = await this.db.transaction().execute(async (trx) => {
      await this.repo.insertFeed(trx, {
        id,
        organization_id: ctx.p.organization.id,
        name: body.name,
        kind: body.kind,
        url,
        options: JSON.stringify(options),
        auth: body.auth ? JSON.stringify(body.auth) : null,
        interval_seconds: body.interval_seconds ?? DEFAULT_INTERVAL,
        is_active: body.is_active ?? true,
        cursor: null,
        // A new feed is pulled at once.
        next_pull_at: at,
        lease_until: null,
        last_pull_at: null,
        last_success_at: null,
        last_error: null,
        reject_examples: '[]',
        created_by: ctx.p.user.id,
        created_at: at,
        updated_at: at,
      });
      await this.audit.recordAs(trx, ctx, { action: 'feed.created', targetType: 'feed', targetId: id, changes: { name: body.name, kind: body.kind, url, auth: maskAuth(body.auth ?? null) } });
      return this.get(ctx.p, id, trx);
    });
    // Due at once: the pulls take it now rather than at their next turn.
    this.puller.wake();
    return row;
  }

  async update(ctx: Ctx, id: string, patch: FeedPatch, assertVersion: (v: number) => void): Promise<FeedRow> {
    const current = await this.get(ctx.p, id);
    this.checkOptions(current.kind, patch);
    const url = patch.url === undefined ? undefined : await destinationUrl(patch.url, this.deps.config.allowPrivateDestinations, 'url');
    return this.db.transaction().execute(async (trx) => {
      const row = await this.get(ctx.p, id, trx);
      assertVersion(Number(row.version));
      const before = presentFeed(row, true);
      const after = { ...patch, ...(url !== undefined && { url }) };
      const changes = diff(before, after, ['auth']);
      if (Object.keys(changes).length === 0) return row;
      const options = JSON.parse(row.options) as Record<string, unknown>;
      for (const f of OPTIONS) {
        if (patch[f] === null) delete options[f];
        else if (patch[f] !== undefined) options[f] = patch[f];
      }
      await this.repo.updateFeed(trx, id, {
        ...(patch.name !== undefined && { name: patch.name }),
        ...(url !== undefined && { url }),
        ...(patch.auth !== undefined && { auth: patch.auth ? JSON.stringify(patch.auth) : null }),
        ...(patch.interval_seconds !== undefined && { interval_seconds: patch.interval_seconds }),
        ...(patch.is_active !== undefined && { is_active: patch.is_active }),
        options: JSON.stringify(options),
        updated_at: this.now(),
      });
      await this.audit.recordAs(trx, ctx, { action: 'feed.updated', targetType: 'feed', targetId: id, changes: { ...changes, ...(patch.auth !== undefined && { auth: { from: maskAuth(before.auth as never), to: maskAuth(patch.auth) } }) } });
      return this.get(ctx.p, id, trx);
    });
  }

  async remove(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await this.get(ctx.p, id, trx);
      await this.repo.deleteFeed(trx, id);
      await this.audit.recordAs(trx, ctx, { action: 'feed.deleted', targetType: 'feed', targetId: id, changes: { name: row.name } });
    });
  }

  /** Pull now: due at once, taken by the next turn of the pulls (woken here). */
  async sync(ctx: Ctx, id: string): Promise<{ status: 'queued'; next_pull_at: string }> {
    await this.get(ctx.p, id);
    const at = this.now();
    await this.repo.dueNow(this.db, id, at);
    this.puller.wake();
    return { status: 'queued', next_pull_at: at };
  }

  /** A STIX bundle given to a stix feed: read and applied as a pull of it is, at once. */
  async upload(ctx: Ctx, id: string, objects: unknown[]): Promise<FeedRow> {
    const feed = await this.get(ctx.p, id);
    if (feed.kind !== 'stix') throw validation([{ field: 'kind', message: `a ${feed.kind} feed is pulled: only a stix feed takes a bundle` }]);
    const counts = await this.puller.applyRead(feed, readStixObjects(objects));
    await this.audit.recordAs(this.db, ctx, { action: 'feed.uploaded', targetType: 'feed', targetId: id, changes: { objects: counts.objects, added: counts.added, updated: counts.updated, retired: counts.retired, rejected: counts.rejected } });
    return this.get(ctx.p, id);
  }

  // --- indicators ---

  /** The indicators naming each of these values (the incidents' feed context), by type and value. */
  async intelFor(db: Kysely<DB>, orgId: string, iocs: ReadonlyArray<{ type: string; value: string }>): Promise<Map<string, IocIntel[]>> {
    const byType = new Map<string, Set<string>>();
    for (const { type, value } of iocs) (byType.get(type) ?? byType.set(type, new Set()).get(type)!).add(value);
    const rows: IndicatorRow[] = [];
    for (const [type, values] of byType) rows.push(...(await this.repo.indicatorsByValue(db, orgId, type, [...values])));
    const feeds = await this.repo.feedsOf(db, rows.map((r) => r.id));
    const out = new Map<string, IocIntel[]>();
    for (const r of rows) {
      const key = `${r.type}\u0000${r.value}`;
      const intel = { indicator: r.id, feeds: feeds.get(r.id) ?? [], confidence: r.confidence === null ? null : Number(r.confidence), tlp: r.tlp, revoked: Boolean(r.revoked), false_positive: Boolean(r.false_positive) };
      const list = out.get(key);
      if (list) list.push(intel);
      else out.set(key, [intel]);
    }
    return out;
  }

  /** The indicators.match hook: the organization's live indicators naming each observation. */
  async match(db: Kysely<DB>, orgId: string, observed: readonly Observed[]): Promise<IndicatorMatch[][]> {
    const found = await matchIndicators(db, this.repo, orgId, observed, this.now(), this.cidrs);
    return found.map((list) => list.map(({ organization_id: _, ...m }) => m));
  }

  /**
   * The leaks.ingested hook: each new record whose address or URL (`extra.url`, a stealer log's) an
   * organization's indicator names is an `indicator.matched` event of that organization, in the
   * batch's transaction (a TLP:RED indicator's match is none: it never leaves).
   */
  async onIngested(trx: Kysely<DB>, records: IngestedRecords, source: { id: string; name: string }): Promise<{ alerts: number; exposures: number }> {
    // Asked before the records are read: with no indicator (most of the time), they are not.
    if (records.count === 0 || !(await this.repo.anyIndicator(trx, null))) return { alerts: 0, exposures: 0 };
    const seen = (await records.load()).filter((r) => r.ip || r.extra.url);
    if (!seen.length) return { alerts: 0, exposures: 0 };
    const found = await matchIndicators(trx, this.repo, null, seen.map((r) => ({ ip: r.ip, url: r.extra.url ?? null })), this.now(), this.cidrs);
    const at = this.now();
    const events: NewEvent[] = [];
    found.forEach((matches, i) => {
      const record = seen[i]!;
      for (const { organization_id, ...match } of matches.filter(mayLeave)) {
        events.push({ organizationId: organization_id, type: 'indicator.matched', data: { match: match as IndicatorMatchOut, seen_in: 'leak_record', severity: record.severity, tracking_token: null, exposure: null, leak_record: record.id, leak_source: source, occurred_at: at } });
      }
    });
    await this.outbox.record(trx, events);
    return { alerts: 0, exposures: 0 };
  }

  private async present(rows: IndicatorRow[]): Promise<IndicatorOut[]> {
    const feeds = await this.repo.feedsOf(this.db, rows.map((r) => r.id));
    return rows.map((r) => presentIndicator(r, feeds.get(r.id) ?? []));
  }

  async listIndicators(p: Principal, params: ListParams): Promise<ListResult<IndicatorOut>> {
    const qb = indicatorListing.filter(this.repo.selectIndicators(this.db, p.organization.id), params, { dialect: this.deps.database.dialect });
    const page = await indicatorListing.page(qb, params, (r: IndicatorRow) => r);
    return { ...page, results: await this.present(page.results) };
  }

  async getIndicator(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<IndicatorRow> {
    const row = await this.repo.findIndicator(db, p.organization.id, id);
    if (!row) throw notFound('No such indicator.');
    return row;
  }

  async presentOne(row: IndicatorRow): Promise<IndicatorOut> {
    return (await this.present([row]))[0]!;
  }

  async updateIndicator(ctx: Ctx, id: string, patch: IndicatorPatch, assertVersion: (v: number) => void): Promise<IndicatorRow> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.getIndicator(ctx.p, id, trx);
      assertVersion(Number(row.version));
      const changes = diff({ false_positive: Boolean(row.false_positive), note: row.note }, patch);
      if (Object.keys(changes).length === 0) return row;
      await this.repo.updateIndicator(trx, id, { ...patch, updated_at: this.now() });
      await this.audit.recordAs(trx, ctx, { action: 'indicator.updated', targetType: 'indicator', targetId: id, changes });
      return this.getIndicator(ctx.p, id, trx);
    });
  }
}
