import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Sessions are refresh-token families: a login starts one, each refresh adds its next token, and
 * logout, a password change, reuse detection or deactivation revoke every token of it. A session
 * whose tokens are all revoked has ended, and so have the access tokens issued in it (their `sid`).
 */
export class SessionsRepository {
  /**
   * The user's sessions that ended and may still have access tokens within their lifetime: the
   * family's newest token was issued at or after `issuedSince`. Older ones hold no live access token.
   */
  async endedSince(db: Kysely<DB>, userId: string, issuedSince: string): Promise<string[]> {
    const rows = await db
      .selectFrom('refresh_tokens')
      .select('family_id')
      .where('user_id', '=', userId)
      .groupBy('family_id')
      .having((eb) => eb.and([eb(eb.fn.max('created_at'), '>=', issuedSince), eb(eb.fn.count('revoked_at'), '=', eb.fn.countAll())]))
      .execute();
    return rows.map((r) => r.family_id);
  }

  /** Whether the session has ended: it has tokens, and every one is revoked. */
  async hasEnded(db: Kysely<DB>, sid: string): Promise<boolean> {
    const row = await db
      .selectFrom('refresh_tokens')
      .select((eb) => [eb.fn.countAll<number | string>().as('tokens'), eb.fn.count<number | string>('revoked_at').as('revoked')])
      .where('family_id', '=', sid)
      .executeTakeFirst();
    return Number(row?.tokens ?? 0) > 0 && Number(row?.tokens) === Number(row?.revoked);
  }
}
