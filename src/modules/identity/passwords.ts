import { hash, verify } from '@node-rs/argon2';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { FieldError } from '../../http/errors.js';
import type { Hooks } from '../../runtime/hooks.js';
import type { AppHooks } from '../hooks.js';

// OWASP Password Storage Cheat Sheet: argon2id, m=19 MiB, t=2, p=1.
// (Algorithm is a const enum in @node-rs/argon2, which isolated modules cannot import: 2 = Argon2id.)
const ARGON2ID = 2;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

// Verified against when the user does not exist, so both failures cost the same time.
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(storedHash: string | null, password: string): Promise<boolean> {
  if (storedHash === null) {
    dummyHash ??= hashPassword('threatmon-timing-equaliser');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(storedHash, password).catch(() => false);
}

export class PasswordPolicy {
  constructor(private readonly hooks: Hooks<Pick<AppHooks, 'auth.breachCheck'>>) {}

  /** Field errors for a new password (empty when acceptable). */
  async check(password: string, field: string, db: Kysely<DB>, context: { username?: string } = {}): Promise<FieldError[]> {
    if (password.length < MIN_PASSWORD_LENGTH) {
      return [{ field, message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }];
    }
    if (context.username && password.toLowerCase() === context.username.toLowerCase()) {
      return [{ field, message: 'must not be the username' }];
    }
    for (const breached of this.hooks.of('auth.breachCheck')) {
      if (await breached(password, db)) return [{ field, message: 'appears in a known breach' }];
    }
    return [];
  }
}
