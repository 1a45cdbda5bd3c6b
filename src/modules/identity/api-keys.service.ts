import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ListParams, ListResult } from '../../db/listing.js';
import type { AppDeps } from '../../deps.js';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { forbidden, notFound, validation } from '../../http/errors.js';
import type { PrincipalCache } from '../../runtime/principal-cache.js';
import { type AuditLog, diff } from '../audit/index.js';
import { apiKeyListing } from './api-keys.lists.js';
import type { ApiKeyRow, ApiKeysRepository } from './api-keys.repository.js';
import type { ApiKeyOut } from './api-keys.schemas.js';
import { framePrincipal, hasRole, type Principal, requirePerson } from './principal.js';
import { throttled } from './throttle.js';
import { unauthenticated } from './tokens.js';
import { ROLE_RANK, type Role } from '../../domain/roles.js';
import type { UsersRepository } from './users.repository.js';
import { presentApiKey } from './identity.presenters.js';

/** `tm_` and 43 characters of base64url: 256 bits from the CSPRNG. */
const KEY_BYTES = 32;
const PREFIX_LENGTH = 11;
/** last_used_at is written at most this often per key and process: not a write per request. */
const TOUCH_EVERY_MS = 60_000;
const REMEMBERED = 100_000;

export const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');

/** Whether a bearer credential is an API key rather than a JWT (which never starts so). */
export const isApiKey = (credential: string) => credential.startsWith('tm_');

/** Unknown, revoked, expired or no longer backed by its creator: one answer for all. */
export const invalidApiKey = () => unauthenticated('token_invalid', 'Invalid API key.');

/** Failed key authentications from one address in a throttle window, past which its unknown keys are 429. */
export const MAX_KEY_FAILURES_PER_IP = 50;

type KeysDeps = Pick<AppDeps, 'database' | 'clock' | 'newId' | 'principals' | 'counters' | 'metrics'>;

/**
 * API keys: made, listed, renamed and revoked by their users (admins: the organization's), and
 * turned into the principal of a request. A key acts as its creator with its own role, and stops
 * at once when revoked, expired, or when its creator is deactivated, removed or demoted below it.
 */
export class ApiKeysService {
  private readonly findPrincipal: ReturnType<UsersRepository['principalLookup']>;
  private readonly touched = new Map<string, number>();
  private readonly seenIps = new Set<string>();

  constructor(
    private readonly deps: KeysDeps,
    private readonly repo: ApiKeysRepository,
    private readonly users: UsersRepository,
    private readonly audit: AuditLog,
  ) {
    this.findPrincipal = users.principalLookup(deps.database.db);
  }

  private get db() {
    return this.deps.database.db;
  }

  private get principals() {
    return this.deps.principals as PrincipalCache<Principal>;
  }

  /** Keys are managed by people: a key may not make or revoke keys. */
  private assertPerson(p: Principal) {
    requirePerson(p, 'API keys cannot manage API keys');
  }

  /** Admins see every key of the organization; others their own. */
  private scope(p: Principal): string | null {
    return hasRole(p, 'admin') ? null : p.user.id;
  }

  private assertRole(p: Principal, role: Role) {
    if (ROLE_RANK[role] > ROLE_RANK[p.role]) throw forbidden(`A key's role cannot be above yours (${p.role}).`);
  }

  /** A key acts for its creator: its role may not be above the creator's (a key above it would stand for nobody). */
  private async assertWithinCreator(db: Kysely<DB>, row: ApiKeyRow, role: Role) {
    const creator = await this.users.findById(db, row.user_id);
    const creatorRole = (creator?.role ?? 'viewer') as Role;
    if (ROLE_RANK[role] > ROLE_RANK[creatorRole]) throw forbidden(`A key's role cannot be above its creator's (${creatorRole}).`);
  }

  async create(p: Principal, body: { name: string; role?: Role; expires_at?: string | null }, ip: string): Promise<ApiKeyOut & { key: string }> {
    this.assertPerson(p);
    const role = body.role ?? p.role;
    this.assertRole(p, role);
    const now = this.deps.clock();
    let expiresAt: string | null = null;
    if (body.expires_at !== undefined && body.expires_at !== null) {
      const at = new Date(body.expires_at);
      if (Number.isNaN(at.getTime()) || at <= now) throw validation([{ field: 'expires_at', message: 'must be a date-time in the future' }]);
      expiresAt = at.toISOString();
    }
    const key = `tm_${randomBytes(KEY_BYTES).toString('base64url')}`;
    const at = now.toISOString();
    const row = {
      id: this.deps.newId(),
      organization_id: p.organization.id,
      user_id: p.user.id,
      name: body.name,
      role,
      prefix: key.slice(0, PREFIX_LENGTH),
      key_hash: keyHash(key),
      created_at: at,
      updated_at: at,
      expires_at: expiresAt,
      last_used_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await this.repo.insert(trx, row);
      await this.audit.record(trx, { organizationId: p.organization.id, actorId: p.user.id, action: 'api_key.created', targetType: 'api_key', targetId: row.id, ip, changes: { name: row.name, role, prefix: row.prefix, expires_at: expiresAt } });
    });
    return { ...presentApiKey({ ...row, version: 1 }), key };
  }

  list(p: Principal, params: ListParams): Promise<ListResult<ApiKeyOut>> {
    this.assertPerson(p);
    const qb = apiKeyListing.filter(this.repo.selectInOrg(this.db, p.organization.id, this.scope(p)), params, { dialect: this.deps.database.dialect });
    return apiKeyListing.page(qb, params, presentApiKey);
  }

  async get(p: Principal, id: string): Promise<ApiKeyRow> {
    this.assertPerson(p);
    const row = await this.repo.find(this.db, p.organization.id, this.scope(p), id);
    if (!row) throw notFound();
    return row;
  }

  async update(p: Principal, id: string, patch: { name?: string; role?: Role }, ip: string): Promise<ApiKeyRow> {
    this.assertPerson(p);
    if (patch.role !== undefined) this.assertRole(p, patch.role);
    const updated = await this.db.transaction().execute(async (trx) => {
      const row = await this.repo.find(trx, p.organization.id, this.scope(p), id);
      if (!row) throw notFound();
      if (patch.role !== undefined) await this.assertWithinCreator(trx, row, patch.role);
      const changes = diff(row, patch);
      if (Object.keys(changes).length === 0) return row;
      await this.repo.update(trx, id, { ...patch, updated_at: this.deps.clock().toISOString() });
      await this.audit.record(trx, { organizationId: p.organization.id, actorId: p.user.id, action: 'api_key.updated', targetType: 'api_key', targetId: id, ip, changes });
      return (await this.repo.find(trx, p.organization.id, null, id)) as ApiKeyRow;
    });
    // A key's role changed: no process may go on answering with the old one.
    await this.principals.changed();
    return updated;
  }

  async revoke(p: Principal, id: string, ip: string): Promise<void> {
    this.assertPerson(p);
    await this.db.transaction().execute(async (trx) => {
      const row = await this.repo.find(trx, p.organization.id, this.scope(p), id);
      if (!row) throw notFound();
      await this.repo.delete(trx, id);
      await this.audit.record(trx, { organizationId: p.organization.id, actorId: p.user.id, action: 'api_key.revoked', targetType: 'api_key', targetId: id, ip, changes: { name: row.name, prefix: row.prefix } });
    });
    // Committed: every process forgets the key before this answers (as for a deactivated user).
    await this.principals.changed();
  }

  /**
   * The principal a key stands for, or 401 `Invalid API key.`: the same answer, after the same
   * lookup, for a key that never existed and one revoked (both have no row).
   */
  async authenticate(key: string, ip: string): Promise<Principal> {
    const hash = keyHash(key);
    const cacheKey = `key:${hash}`;
    let principal = this.principals.get(cacheKey);
    if (!principal) {
      const mark = this.principals.mark();
      // A key not remembered is looked up under the address's throttle: guessing costs a lookup each.
      const found = await throttled(this.deps, { limits: [[`apikey:ip:${ip}`, MAX_KEY_FAILURES_PER_IP]], code: 'rate_limited', refused: 'Too many failed API key authentications from this address;', metric: 'api_key' }, async () => {
        const row = await this.repo.byHash(this.db, hash);
        if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return null;
        const user = await this.findPrincipal(row.user_id);
        const role = row.role as Role;
        if (!user?.is_active || ROLE_RANK[user.role as Role] < ROLE_RANK[role]) return null;
        return framePrincipal(user, { role, endedSessions: new Set<string>(), apiKey: { id: row.id, expiresAt: row.expires_at } });
      });
      if (!found) throw invalidApiKey();
      principal = found;
      this.principals.put(cacheKey, principal, mark);
    }
    const now = this.deps.clock();
    if (principal.apiKey?.expiresAt && principal.apiKey.expiresAt <= now.toISOString()) throw invalidApiKey();
    await this.noteUse(principal, ip, now);
    return principal;
  }

  /** last_used_at (to the minute), and an audit entry the first time the key is used from an address. */
  private async noteUse(p: Principal, ip: string, now: Date) {
    const id = (p.apiKey as { id: string }).id;
    const last = this.touched.get(id);
    if (last === undefined || now.getTime() - last >= TOUCH_EVERY_MS) {
      if (this.touched.size >= REMEMBERED) this.touched.clear();
      this.touched.set(id, now.getTime());
      await this.repo.touch(this.db, id, now.toISOString());
    }
    const seen = `${id} ${ip}`;
    if (this.seenIps.has(seen)) return;
    await this.db.transaction().execute(async (trx) => {
      if (await this.repo.addIp(trx, id, ip, now.toISOString())) {
        await this.audit.record(trx, { organizationId: p.organization.id, actorId: p.user.id, action: 'api_key.new_ip', targetType: 'api_key', targetId: id, ip, changes: { ip } });
      }
    });
    if (this.seenIps.size >= REMEMBERED) this.seenIps.clear();
    this.seenIps.add(seen);
  }
}
