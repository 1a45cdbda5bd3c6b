import { randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../../deps.js';
import type { ClientRequest } from '../../domain/client-request.js';
import { normaliseCidr, normaliseIp, normaliseUrl } from '../../domain/ioc.js';
import { sha1Hex } from '../../domain/leak-record.js';
import { notFound, validation } from '../../http/errors.js';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { JobLog } from '../../runtime/jobs.js';
import { type AuditLog, diff } from '../audit/index.js';
import type { Principal } from '../identity/index.js';
import type { NewEvent, Outbox } from '../events/index.js';
import type { UsersService } from '../identity/index.js';
import type { IndicatorMatchHook, IngestedRecords } from '../hooks.js';
import { mayLeave } from '../../domain/stix.js';
import { LeakTokenIndex } from './tracking-tokens.matcher.js';
import type { ExposureRow, NewExposure, TokenRow, TokenTarget, TrackingTokensRepository } from './tracking-tokens.repository.js';
import { tokenListing, exposureListing } from './tracking-tokens.lists.js';
import { CHANNELS, type ExposureOut, type TokenCreate, type TokenOut, type TokenPatch } from './tracking-tokens.schemas.js';
import { presentExposure } from './tracking-tokens.presenters.js';

type Ctx = { p: Principal; ip: string };
type Channel = (typeof CHANNELS)[number];

/** At most this many exposures of one token are recorded in any 60 s (leak exposures aside). */
export const EXPOSURE_CAP = 60;
const CAP_WINDOW_MS = 60_000;
/** Hits waiting to be recorded; past this (a flood), more are dropped before any work. */
const MAX_QUEUED = 10_000;
const HEADER_MAX = 1024;
/** Every trigger key: 24 random bytes in base64url. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{32}$/;
const NO_KEY = '-'.repeat(32);

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const trim = (v: string | string[] | undefined) => (v === undefined ? null : (Array.isArray(v) ? v.join(', ') : v).slice(0, HEADER_MAX));

/** The client address as stored: canonical, IPv4-mapped IPv6 as IPv4. */
export function canonicalIp(ip: string): string {
  const n = normaliseIp(ip);
  return n.ok ? n.value : ip;
}

/** Whether `ip` (canonical) is one of `entries` or inside one of their ranges. */
export function ignored(ip: string, entries: readonly string[]): boolean {
  if (entries.length === 0 || !ipaddr.isValid(ip)) return false;
  const addr = ipaddr.parse(ip);
  return entries.some((e) => {
    if (!e.includes('/')) return e === ip;
    const [net, bits] = ipaddr.parseCIDR(e);
    return net.kind() === addr.kind() && addr.match([net, bits] as never);
  });
}

/** ignore_ips normalised, or a 400 naming each bad entry (ignore_ips.<index>). */
function ignoreList(entries: readonly string[]): string[] {
  const errors: Array<{ field: string; message: string }> = [];
  const out = entries.map((e, i) => {
    const n = e.includes('/') ? normaliseCidr(e) : normaliseIp(e);
    if (!n.ok) errors.push({ field: `ignore_ips.${i}`, message: 'must be an IP address or CIDR range such as 192.0.2.0/24' });
    return n.ok ? n.value : e;
  });
  if (errors.length) throw validation(errors);
  return [...new Set(out)];
}

/**
 * The events of an exposure: `tracking_token.exposed`, and an `indicator.matched` per indicator that
 * named it. A TLP:RED indicator's match leaves in neither (the timeline keeps it).
 */
function exposureEvents(organizationId: string, exposure: ExposureOut): NewEvent[] {
  const leaving = exposure.indicator_matches.filter(mayLeave);
  return [
    { organizationId, type: 'tracking_token.exposed', data: { ...exposure, indicator_matches: leaving } },
    ...leaving.map((match): NewEvent => ({
      organizationId,
      type: 'indicator.matched',
      data: { match, seen_in: 'tracking_token', severity: exposure.severity, tracking_token: exposure.token, exposure: exposure.id, leak_record: null, leak_source: null, occurred_at: exposure.occurred_at },
    })),
  ];
}

interface Hit {
  token: TokenTarget;
  channel: Channel;
  client: ClientRequest;
  at: Date;
}

/**
 * Tracking tokens: canaries over four channels (their trigger URL, a login with their credential,
 * their API key presented as a Bearer token, their material found in ingested leak data).
 */
export class TrackingTokensService {
  private leakIndex?: { generation: number; tokens: LeakTokenIndex };
  private readonly queue: Hit[] = [];
  private draining?: Promise<void>;
  private log?: JobLog;
  /** Per token (NO_TOKEN's id for every unknown key), the hits this process saw in the current cap window. */
  private readonly windows = new Map<string, { start: number; n: number }>();

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'counters' | 'config'>,
    private readonly repo: TrackingTokensRepository,
    private readonly audit: AuditLog,
    private readonly outbox: Outbox,
    private readonly users: Pick<UsersService, 'usernameTaken'>,
    /** The indicators naming what a hit came with (feeds answer it; none without them). */
    private readonly indicators: IndicatorMatchHook,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  /** Where recording errors are reported (the app's logger). */
  setLog(log: JobLog) {
    this.log = log;
  }

  present(r: TokenRow, base: string): TokenOut {
    return {
      id: r.id,
      name: r.name,
      memo: r.memo,
      kind: r.kind as TokenOut['kind'],
      status: r.status as TokenOut['status'],
      ignore_ips: JSON.parse(r.ignore_ips) as string[],
      exposure_count: Number(r.exposure_count),
      last_exposed_at: r.last_exposed_at,
      ...(r.trigger_key !== null && { trigger_url: `${base}/t/${r.trigger_key}/` }),
      ...(r.redirect_url !== null && { redirect_url: r.redirect_url }),
      ...(r.username !== null && { username: r.username }),
      ...(r.password !== null && { password: r.password }),
      ...(r.api_key !== null && { api_key: r.api_key }),
      created_by: r.created_by,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  /** A page of tokens, each as its JSON text, trigger URLs under `base`. */
  list(p: Principal, params: ListParams, base: string): Promise<ListResult<string>> {
    const qb = tokenListing.filter(this.repo.selectTokenJson(this.db, p.organization.id, base), params, { dialect: this.deps.database.dialect });
    return tokenListing.page(qb, params, (r: { json: string }) => r.json);
  }

  async get(p: Principal, id: string, db: Kysely<DB> = this.db): Promise<TokenRow> {
    const row = await this.repo.findToken(db, p.organization.id, id);
    if (!row) throw notFound('No such tracking token.');
    return row;
  }

  async create(ctx: Ctx, body: TokenCreate): Promise<TokenRow> {
    const errors: Array<{ field: string; message: string }> = [];
    const only = (field: 'redirect_url' | 'username' | 'password', kind: string) => {
      if (body[field] !== undefined && body.kind !== kind) errors.push({ field, message: `only for kind ${kind}` });
    };
    only('redirect_url', 'redirect');
    only('username', 'credential');
    only('password', 'credential');
    let redirectUrl: string | null = null;
    if (body.kind === 'redirect') {
      const n = body.redirect_url === undefined ? null : normaliseUrl(body.redirect_url);
      if (!n) errors.push({ field: 'redirect_url', message: 'is required for kind redirect' });
      else if (!n.ok || !/^https?:\/\//.test(n.value)) errors.push({ field: 'redirect_url', message: 'must be an http or https URL' });
      else redirectUrl = n.value;
    }
    if (errors.length) throw validation(errors);
    const ignoreIps = ignoreList(body.ignore_ips ?? []);
    return this.db.transaction().execute(async (trx) => {
      const at = this.deps.clock();
      let username: string | null = null;
      if (body.kind === 'credential') {
        username = body.username ?? `svc-backup-${randomBytes(3).toString('hex')}`;
        // An account's name (the users module's own check, ignoring case) or another token's.
        if ((await this.users.usernameTaken(trx, username)) || (await this.repo.usernameTaken(trx, username.toLowerCase()))) throw validation([{ field: 'username', message: 'is already used by an account or another token' }]);
      }
      const password = body.kind === 'credential' ? (body.password ?? `${randomBytes(12).toString('base64url')}!7`) : null;
      const apiKey = body.kind === 'api_key' ? this.fakeApiKey(at) : null;
      const row = {
        id: this.deps.newId(),
        organization_id: ctx.p.organization.id,
        name: body.name,
        memo: body.memo ?? '',
        kind: body.kind,
        status: body.status ?? 'active',
        // 192 random bits: a key cannot be guessed or enumerated.
        trigger_key: body.kind === 'web_bug' || body.kind === 'redirect' ? randomBytes(24).toString('base64url') : null,
        redirect_url: redirectUrl,
        username,
        username_lower: username?.toLowerCase() ?? null,
        password,
        password_sha1: password === null ? null : sha1Hex(password),
        api_key: apiKey,
        api_key_sha1: apiKey === null ? null : sha1Hex(apiKey),
        ignore_ips: JSON.stringify(ignoreIps),
        last_exposed_at: null,
        created_by: ctx.p.user.id,
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      };
      await this.repo.insertToken(trx, row);
      await this.repo.bumpGeneration(trx);
      // The material is the canary's secret: the audit log names the token, not its material.
      await this.audit.recordAs(trx, ctx, { action: 'tracking_token.created', targetType: 'tracking_token', targetId: row.id, changes: { name: row.name, kind: row.kind } });
      return this.get(ctx.p, row.id, trx);
    });
  }

  /**
   * A key shaped like this API's access tokens (a signed JWT with the same header and claims), whose
   * signature is random: it never verifies, so presenting it is always an ordinary 401.
   */
  private fakeApiKey(at: Date): string {
    const iat = Math.floor(at.getTime() / 1000);
    const { jwtIssuer: iss, jwtAudience: aud } = this.deps.config;
    const payload = { org: this.deps.newId(), role: 'admin', type: 'access', sid: this.deps.newId(), sub: this.deps.newId(), jti: this.deps.newId(), iat, exp: iat + 365 * 86_400, iss, aud };
    return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}.${randomBytes(32).toString('base64url')}`;
  }

  async update(ctx: Ctx, id: string, patch: TokenPatch, assertVersion: (v: number) => void): Promise<TokenRow> {
    const next = { ...patch, ...(patch.ignore_ips !== undefined && { ignore_ips: ignoreList(patch.ignore_ips) }) };
    return this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      assertVersion(current.version);
      const changes = diff({ name: current.name, memo: current.memo, status: current.status, ignore_ips: JSON.parse(current.ignore_ips) } as Record<string, unknown>, next);
      if (Object.keys(changes).length === 0) return current;
      await this.repo.updateToken(trx, id, {
        ...(next.name !== undefined && { name: next.name }),
        ...(next.memo !== undefined && { memo: next.memo }),
        ...(next.status !== undefined && { status: next.status }),
        ...(next.ignore_ips !== undefined && { ignore_ips: JSON.stringify(next.ignore_ips) }),
        updated_at: this.deps.clock().toISOString(),
      });
      await this.repo.bumpGeneration(trx);
      await this.audit.recordAs(trx, ctx, { action: 'tracking_token.updated', targetType: 'tracking_token', targetId: id, changes });
      return this.get(ctx.p, id, trx);
    });
  }

  async remove(ctx: Ctx, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const current = await this.get(ctx.p, id, trx);
      await this.repo.deleteToken(trx, id);
      await this.repo.bumpGeneration(trx);
      await this.audit.recordAs(trx, ctx, { action: 'tracking_token.deleted', targetType: 'tracking_token', targetId: id, changes: { name: current.name, kind: current.kind } });
    });
  }

  /** A page of a token's exposures, each as its JSON text. */
  async timeline(p: Principal, id: string, params: ListParams): Promise<ListResult<string>> {
    // Read within the organization first: the exposures query then needs only the token.
    const token = await this.get(p, id);
    const qb = exposureListing.filter(this.repo.selectExposureJson(this.db, token.id), params, { dialect: this.deps.database.dialect });
    // Unfiltered, the count is the token's exposure_count, kept in each exposure's transaction.
    const unfiltered = !['channel', 'occurred_after', 'occurred_before'].some((k) => k in params.filters);
    return exposureListing.page(qb, params, (r: { json: string }) => r.json, unfiltered ? async () => Number(token.exposure_count) : undefined);
  }

  countTokens(db: Kysely<DB>, orgId: string): Promise<number> {
    return this.repo.countTokens(db, orgId);
  }

  // --- the channels ---

  /**
   * A hit of /t/<key>/. Known key or not, the same work: one lookup, and the hit handed to the
   * recorder, which decides off the response path whether there is anything to record. Answers
   * where a redirect token sends its visitor (disabled or not), else null (the GIF).
   */
  async trigger(key: string, client: ClientRequest): Promise<string | null> {
    // A key no token can have (a NUL, which PostgreSQL refuses in text) is looked up as one that does not exist.
    const token = await this.repo.byTriggerKey(this.db, KEY_SHAPE.test(key) ? key : NO_KEY);
    this.offer({ token, channel: 'http', client, at: this.deps.clock() });
    return token.kind === 'redirect' ? token.redirect_url : null;
  }

  /** The auth.loginAttempt hook: a login with a credential token's username. */
  async onLogin(username: string, client: ClientRequest): Promise<void> {
    if (username.includes('\u0000')) return;
    const token = await this.repo.byUsername(this.db, username.toLowerCase());
    if (token) this.offer({ token, channel: 'login', client, at: this.deps.clock() });
  }

  /** The auth.unknownBearer hook: only a bearer that fails verification is looked up, never a valid one. */
  async onBearer(bearer: string, client: ClientRequest): Promise<void> {
    if (bearer.length > 2048 || bearer.split('.').length !== 3) return;
    const token = await this.repo.byApiKey(this.db, bearer);
    if (token?.kind === 'api_key') this.offer({ token, channel: 'api_key', client, at: this.deps.clock() });
  }

  private offer(hit: Hit) {
    if (this.queue.length >= MAX_QUEUED) return;
    this.queue.push(hit);
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        try {
          await this.record(this.queue.splice(0, this.queue.length));
        } catch (err) {
          this.log?.error({ err }, 'tracking token: exposures could not be recorded');
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Resolves when every hit offered so far has been recorded or dropped. */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /**
   * Records the hits waiting, those admitted (see admit), in one transaction: a burst of hits
   * writes once, so that worker processes of one SQLite file do not queue for its write lock
   * once per hit (a queued writer's process stalls while it waits).
   */
  private async record(hits: Hit[]): Promise<void> {
    const admitted = (await Promise.all(hits.map((hit) => this.admit(hit)))).filter((row) => row !== null);
    if (admitted.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await this.matchIndicators(trx, admitted);
      const recorded: NewExposure[] = [];
      for (const row of admitted) {
        // The database's own count holds the cap over any 60 s, whatever window the counters had.
        const since = new Date(Date.parse(row.occurred_at) - CAP_WINDOW_MS).toISOString();
        if (!(await this.repo.countExposure(trx, row.token_id, row.occurred_at, since, EXPOSURE_CAP))) continue;
        await this.repo.insertExposure(trx, row);
        recorded.push(row);
      }
      await this.outbox.record(trx, recorded.flatMap((row) => exposureEvents(row.organization_id, presentExposure(row as ExposureRow))));
    });
  }

  /** Each hit's indicator matches (its address, its Referer as a URL, its User-Agent), kept with its exposure. */
  private async matchIndicators(trx: Kysely<DB>, rows: NewExposure[]): Promise<void> {
    const byOrg = new Map<string, NewExposure[]>();
    for (const row of rows) {
      const list = byOrg.get(row.organization_id);
      if (list) list.push(row);
      else byOrg.set(row.organization_id, [row]);
    }
    for (const [orgId, list] of byOrg) {
      const found = await this.indicators(trx, orgId, list.map((r) => ({ ip: r.source_ip, url: r.referer, user_agent: r.user_agent })));
      list.forEach((row, i) => (row.indicator_matches = JSON.stringify(found[i] ?? [])));
    }
  }

  /**
   * The exposure a hit makes when its token is active, its address not ignored and the token under
   * its cap, else null. A hit of no token (NO_TOKEN, a disabled one) takes the same steps up to the
   * last, so that the two cost the same to the process answering both.
   */
  private async admit({ token, channel, client, at }: Hit): Promise<NewExposure | null> {
    const key = token.id;
    const ip = canonicalIp(client.ip);
    // An ignored address (a scanner) takes no room under the cap.
    if (ignored(ip, JSON.parse(token.ignore_ips) as string[])) return null;
    // This process's own count first: past the cap, a flood costs nothing more than a map lookup.
    let window = this.windows.get(key);
    if (!window || at.getTime() - window.start >= CAP_WINDOW_MS) {
      if (this.windows.size > 10_000) this.windows.clear();
      window = { start: at.getTime(), n: 0 };
      this.windows.set(key, window);
    }
    if (++window.n > EXPOSURE_CAP) return null;
    // The shared counters (memory, the cluster primary or Redis) hold the cap across processes.
    const { allowed } = await this.deps.counters.hit(`tracking:${key}`, EXPOSURE_CAP, CAP_WINDOW_MS);
    if (!allowed || token.status !== 'active') return null;
    return {
      id: this.deps.newId(),
      organization_id: token.organization_id,
      token_id: token.id,
      channel,
      occurred_at: at.toISOString(),
      source_ip: ip,
      user_agent: trim(client.headers['user-agent']),
      referer: trim(client.headers.referer),
      method: client.method,
      path: client.url.slice(0, HEADER_MAX),
      leak_record_id: null,
      leak_source_id: null,
      leak_source_name: null,
    };
  }

  /**
   * The leaks.ingested hook: active tokens found in a batch's records, recorded in its transaction,
   * each (token, record) once. Not capped: each is one record of data someone ingested.
   */
  async exposeInLeaks(trx: Kysely<DB>, records: IngestedRecords, source: { id: string; name: string }): Promise<{ alerts: number; exposures: number }> {
    if (records.count === 0) return { alerts: 0, exposures: 0 };
    const generation = await this.repo.generation(trx);
    if (!this.leakIndex || this.leakIndex.generation !== generation) this.leakIndex = { generation, tokens: new LeakTokenIndex(await this.repo.activeForLeaks(trx)) };
    if (this.leakIndex.tokens.size === 0) return { alerts: 0, exposures: 0 };
    const found = this.leakIndex.tokens.find(await records.load());
    if (found.length === 0) return { alerts: 0, exposures: 0 };
    const at = this.deps.clock().toISOString();
    const inserted = await this.repo.insertLeakExposures(
      trx,
      found.map(({ token, record }) => ({
        id: this.deps.newId(),
        organization_id: token.organization_id,
        token_id: token.id,
        channel: 'leak',
        occurred_at: at,
        source_ip: null,
        user_agent: null,
        referer: null,
        method: null,
        path: null,
        leak_record_id: record.id,
        leak_source_id: source.id,
        leak_source_name: source.name,
      })),
    );
    const perToken = new Map<string, number>();
    for (const e of inserted) perToken.set(e.token_id, (perToken.get(e.token_id) ?? 0) + 1);
    for (const [tokenId, n] of perToken) await this.repo.addExposures(trx, tokenId, n, at);
    await this.outbox.record(trx, inserted.flatMap((e) => exposureEvents(e.organization_id, presentExposure(e))));
    return { alerts: 0, exposures: inserted.length };
  }
}

