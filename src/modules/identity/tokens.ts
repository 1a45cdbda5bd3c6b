import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Config } from '../../config.js';
import { AppError } from '../../http/errors.js';

export type TokenType = 'access' | 'refresh';

/**
 * The claims of a verified payload, each of the type this service signs it with, or null. Every
 * token this service signs names its session: one without cannot be ended, so it is not taken.
 */
function claimsOf(p: Record<string, unknown>): Claims | null {
  const { sub, org, role, type, sid, jti, iat, exp } = p;
  if (type !== 'access' && type !== 'refresh') return null;
  if (typeof sid !== 'string' || sid === '') return null;
  if (typeof sub !== 'string' || typeof org !== 'string' || typeof role !== 'string' || typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
  return { sub, org, role, type, sid, jti, iat, exp };
}

export interface Claims {
  sub: string;
  org: string;
  role: string;
  type: TokenType;
  /** The session: the refresh-token family both tokens of a login belong to (see AuthService). */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
}

const ALGORITHM = 'HS256';
export const LEEWAY_SECONDS = 30;

export const unauthenticated = (code: 'not_authenticated' | 'token_invalid' | 'token_expired' | 'invalid_credentials', detail: string) =>
  new AppError(code, 401, detail, { headers: { 'www-authenticate': 'Bearer' } });

/** A user found by a token's subject must still be active: else the token stands for nobody (401). */
export function assertActive<T extends { is_active: boolean | number }>(user: T | undefined): asserts user is T {
  if (!user?.is_active) throw unauthenticated('token_invalid', 'User is inactive or deleted.');
}

/**
 * The HS256 key: THREATMON_JWT_SECRET, or (embedded mode) a random secret generated once and
 * kept in the data directory with mode 0600 so tokens survive restarts.
 */
export function loadJwtSecret(config: Pick<Config, 'jwtSecret' | 'dataDir'>): Uint8Array {
  if (config.jwtSecret) return new TextEncoder().encode(config.jwtSecret);
  const file = path.join(config.dataDir, 'jwt-secret');
  try {
    return new TextEncoder().encode(fs.readFileSync(file, 'utf8').trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  try {
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process won the race: use its secret.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadJwtSecret(config);
    throw err;
  }
  return new TextEncoder().encode(secret);
}

/** Verified tokens remembered, so a client's repeated requests skip the HMAC; bounded, oldest dropped first. */
const VERIFIED_CACHE_SIZE = 10_000;

export class TokenService {
  // A KeyObject made once: handing jose raw bytes would import a key on every sign and verify.
  private readonly key: KeyObject;
  private readonly verified = new Map<string, Claims>();

  constructor(
    secret: Uint8Array,
    private readonly config: Pick<Config, 'jwtIssuer' | 'jwtAudience' | 'accessTtlSeconds' | 'refreshTtlSeconds'>,
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {
    this.key = createSecretKey(secret);
  }

  ttl(type: TokenType): number {
    return type === 'access' ? this.config.accessTtlSeconds : this.config.refreshTtlSeconds;
  }

  /** `sid`: the session the token belongs to; a new one unless given. */
  async sign(subject: { userId: string; orgId: string; role: string }, type: TokenType, session?: string): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const now = Math.floor(this.clock().getTime() / 1000);
    const jti = this.newId();
    const sid = session ?? this.newId();
    const exp = now + this.ttl(type);
    const token = await new SignJWT({ org: subject.orgId, role: subject.role, type, sid })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(subject.userId)
      .setJti(jti)
      .setIssuedAt(now)
      .setExpirationTime(exp)
      .setIssuer(this.config.jwtIssuer)
      .setAudience(this.config.jwtAudience)
      .sign(this.key);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  /** Verifies signature, algorithm, issuer, audience, expiry (30 s leeway) and the token type. */
  async verify(token: string, type: TokenType | 'any'): Promise<Claims> {
    const known = this.verified.get(token);
    // The signature and claims of this exact string were checked; only the clock can change the answer.
    if (known && known.exp + LEEWAY_SECONDS > this.clock().getTime() / 1000) return this.checkType(known, type);
    if (known) this.verified.delete(token);
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        issuer: this.config.jwtIssuer,
        audience: this.config.jwtAudience,
        clockTolerance: LEEWAY_SECONDS,
        currentDate: this.clock(),
        requiredClaims: ['sub', 'jti', 'exp', 'iat'],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthenticated('token_expired', 'Token has expired.');
      throw unauthenticated('token_invalid', 'Token is invalid.');
    }
    const claims = claimsOf(payload);
    if (!claims) throw unauthenticated('token_invalid', 'Token is invalid.');
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, claims);
    return this.checkType(claims, type);
  }

  private checkType(claims: Claims, type: TokenType | 'any'): Claims {
    if (type !== 'any' && claims.type !== type) {
      throw unauthenticated('token_invalid', `Token is invalid: a ${claims.type} token cannot be used here.`);
    }
    return claims;
  }
}
