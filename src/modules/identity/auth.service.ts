import type { ClientRequest } from '../../domain/client-request.js';
import type { AppDeps } from '../../deps.js';
import { type Principal, requirePerson } from './principal.js';
import { AppError, validation } from '../../http/errors.js';
import type { AuditLog } from '../audit/index.js';
import type { User, UsersRepository } from './users.repository.js';
import type { UsersService } from './users.service.js';
import { hashPassword, type PasswordPolicy, verifyPassword } from './passwords.js';
import { SessionsRepository } from './sessions.repository.js';
import type { Hooks } from '../../runtime/hooks.js';
import type { AppHooks } from '../hooks.js';
import { throttled } from './throttle.js';
import { assertActive, type TokenService, unauthenticated } from './tokens.js';

export const MAX_FAILURES_PER_USERNAME = 10;
export const MAX_FAILURES_PER_IP = 50;

export interface TokenPair {
  access: string;
  refresh: string;
  token_type: 'Bearer';
  expires_in: number;
}

export class AuthService {
  private readonly sessions = new SessionsRepository();

  constructor(
    private readonly deps: Pick<AppDeps, 'database' | 'clock' | 'newId' | 'counters' | 'metrics' | 'principals'>,
    private readonly tokens: TokenService,
    private readonly users: UsersRepository,
    private readonly usersService: UsersService,
    private readonly audit: AuditLog,
    private readonly policy: PasswordPolicy,
    private readonly hooks: Hooks<Pick<AppHooks, 'auth.loginAttempt'>>,
  ) {}

  private get db() {
    return this.deps.database.db;
  }

  private async pair(user: { id: string; organization_id: string; role: string }, familyId: string, db = this.db): Promise<TokenPair> {
    const subject = { userId: user.id, orgId: user.organization_id, role: user.role };
    const access = await this.tokens.sign(subject, 'access', familyId);
    const refresh = await this.tokens.sign(subject, 'refresh', familyId);
    await this.sessions.insertToken(db, {
      jti: refresh.jti,
      user_id: user.id,
      family_id: familyId,
      expires_at: refresh.expiresAt.toISOString(),
      created_at: this.deps.clock().toISOString(),
    });
    return { access: access.token, refresh: refresh.token, token_type: 'Bearer', expires_in: this.tokens.ttl('access') };
  }

  /** A password check under the login throttle, per username and per client IP (see throttled). */
  private throttled<T>(username: string, ip: string, check: () => Promise<T | null>): Promise<T | null> {
    return throttled(this.deps, { limits: [[`login:u:${username.toLowerCase()}`, MAX_FAILURES_PER_USERNAME], [`login:ip:${ip}`, MAX_FAILURES_PER_IP]], code: 'login_throttled', refused: 'Too many failed logins;', metric: 'login' }, check);
  }

  async login(username: string, password: string, request: ClientRequest): Promise<TokenPair> {
    const user = await this.verifyCredentials(username, password, request);
    return this.db.transaction().execute(async (trx) => {
      const pair = await this.pair(user, this.deps.newId(), trx);
      await this.users.touchLogin(trx, user.id, this.deps.clock().toISOString());
      await this.audit.record(trx, {
        organizationId: user.organization_id,
        actorId: user.id,
        action: 'auth.login',
        targetType: 'user',
        targetId: user.id,
        ip: request.ip,
      });
      return pair;
    });
  }

  /**
   * A username and password checked as a login checks them (canary hook, throttling, the failure
   * audited), without opening a session: HTTP Basic of the TAXII clients. Returns the user's id.
   */
  async checkPassword(username: string, password: string, request: ClientRequest): Promise<string> {
    return (await this.verifyCredentials(username, password, request)).id;
  }

  private async verifyCredentials(username: string, password: string, request: ClientRequest): Promise<User> {
    for (const hook of this.hooks.of('auth.loginAttempt')) await hook(username, request);
    let known: User | undefined;
    const user = await this.throttled(username, request.ip, async () => {
      known = await this.users.findByUsername(this.db, username);
      const ok = await verifyPassword(known?.password_hash ?? null, password);
      return known && ok && known.is_active ? known : null;
    });
    if (!user) {
      await this.audit.record(this.db, {
        organizationId: known?.organization_id ?? null,
        actorId: known?.id ?? null,
        action: 'auth.login_failed',
        targetType: 'user',
        targetId: known?.id ?? null,
        ip: request.ip,
        changes: { username },
      });
      throw unauthenticated('invalid_credentials', 'No active account found with the given credentials.');
    }
    return user;
  }

  /**
   * Rotation: the presented refresh token is revoked and a new pair issued in its family.
   * A revoked token presented again means it was stolen or replayed: the whole family is revoked.
   */
  async refresh(token: string, ip: string): Promise<TokenPair> {
    const claims = await this.tokens.verify(token, 'refresh');
    const invalid = unauthenticated('token_invalid', 'Token is invalid or has been revoked.');
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await this.sessions.findToken(trx, claims.jti);
      if (!row) return 'invalid' as const;
      const now = this.deps.clock().toISOString();
      const rotated = !row.revoked_at && (await this.sessions.revokeToken(trx, row.jti, now));
      const user = await this.users.findById(trx, row.user_id);
      if (!rotated) {
        await this.sessions.revokeSession(trx, row.family_id, now);
        await this.audit.record(trx, {
          organizationId: user?.organization_id ?? null,
          actorId: row.user_id,
          action: 'auth.refresh_reuse_detected',
          targetType: 'user',
          targetId: row.user_id,
          ip,
          changes: { family: row.family_id },
        });
        return 'reused' as const;
      }
      if (!user?.is_active) return 'invalid' as const;
      return this.pair(user, row.family_id, trx);
    });
    // Reuse ended the session: its access tokens stop working on every node too.
    if (result === 'reused') await this.deps.principals.changed();
    if (result === 'invalid' || result === 'reused') throw invalid;
    return result;
  }

  /** Valid signature, not expired, user still active and, for a refresh token, not revoked. */
  async verify(token: string): Promise<void> {
    const claims = await this.tokens.verify(token, 'any');
    const user = await this.users.findById(this.db, claims.sub);
    if (!user?.is_active) throw unauthenticated('token_invalid', 'Token is invalid.');
    if (claims.type === 'refresh') {
      const row = await this.sessions.findToken(this.db, claims.jti);
      if (!row || row.revoked_at) throw unauthenticated('token_invalid', 'Token has been revoked.');
    } else if (await this.sessions.hasEnded(this.db, claims.sid)) {
      throw unauthenticated('token_invalid', 'Token has been revoked.');
    }
  }

  /**
   * Logout: revokes the token's family, which ends the session's access tokens too (on every node:
   * the principals announce it). Idempotent: an expired or already revoked token is fine too.
   */
  async revoke(token: string, ip: string): Promise<void> {
    let claims: Awaited<ReturnType<TokenService['verify']>>;
    try {
      claims = await this.tokens.verify(token, 'refresh');
    } catch (err) {
      if (err instanceof AppError && err.code === 'token_expired') return;
      throw err;
    }
    const ended = await this.db.transaction().execute(async (trx) => {
      const row = await this.sessions.findToken(trx, claims.jti);
      if (!row) return false;
      if ((await this.sessions.revokeSession(trx, row.family_id, this.deps.clock().toISOString())) === 0) return false;
      const user = await this.users.findById(trx, row.user_id);
      await this.audit.record(trx, {
        organizationId: user?.organization_id ?? null,
        actorId: row.user_id,
        action: 'auth.token_revoked',
        targetType: 'user',
        targetId: row.user_id,
        ip,
      });
      return true;
    });
    if (ended) await this.deps.principals.changed();
  }

  async changePassword(p: Principal, current: string, next: string, ip: string): Promise<void> {
    requirePerson(p, 'An API key cannot change a password');
    // The stored hash, not the principal's: a principal may be remembered from before a change made elsewhere.
    // A wrong current password is a failed login of this username: a stolen access token must not
    // allow guessing the password at the speed of the API.
    const stored = await this.throttled(p.user.username, ip, async () => {
      const user = await this.currentUser(p);
      return (await verifyPassword(user.password_hash, current)) ? user : null;
    });
    if (!stored) {
      await this.audit.record(this.db, {
        organizationId: p.organization.id,
        actorId: p.user.id,
        action: 'auth.login_failed',
        targetType: 'user',
        targetId: p.user.id,
        ip,
        changes: { username: p.user.username, reason: 'wrong current password' },
      });
      throw validation([{ field: 'current_password', message: 'is incorrect' }]);
    }
    const errors = await this.policy.check(next, 'new_password', this.db, { username: p.user.username });
    if (errors.length) throw validation(errors);
    const hash = await hashPassword(next);
    await this.db.transaction().execute(async (trx) => {
      await this.users.update(trx, p.user.id, { password_hash: hash, updated_at: this.deps.clock().toISOString() });
      await this.usersService.revokeAllRefresh(trx, p.user.id);
      await this.audit.record(trx, {
        organizationId: p.organization.id,
        actorId: p.user.id,
        action: 'auth.password_changed',
        targetType: 'user',
        targetId: p.user.id,
        ip,
      });
    });
    await this.deps.principals.changed();
  }

  /** The caller as stored now (the principal may be remembered from before the last login). */
  async currentUser(p: Principal): Promise<User> {
    const user = await this.users.findById(this.db, p.user.id);
    assertActive(user);
    return user;
  }
}
