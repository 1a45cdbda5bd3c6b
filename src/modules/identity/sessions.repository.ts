import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Sessions are refresh-token families: a login starts one, each refresh adds its next token, and
 * logout, a password change, reuse detection or deactivation revoke every token of it. A session
 * whose tokens are all revoked has ended, and so have the access tokens issued in it (their `sid`).
 */
export class SessionsRepository {
  /** Records a refresh token of session `familyId`. */
  async insertToken(db: Kysely<DB>, row: { jti: string; user_id: string; family_id: string; expires_at: string; created_at: string }): Promise<void> {
    await db.insertInto('refresh_tokens').values({ ...row, revoked_at: null }).execute();
  }

  findToken(db: Kysely<DB>, jti: string) {
    return db.selectFrom('refresh_tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
  }

  /** Revokes one token if it is not revoked yet; whether it was (a rotation that won). */
  async revokeToken(db: Kysely<DB>, jti: string, at: string): Promise<boolean> {
    const r = await db.updateTable('refresh_tokens').set({ revoked_at: at }).where('jti', '=', jti).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Revokes what is left of a session; how many tokens that was. */
  async revokeSession(db: Kysely<DB>, familyId: string, at: string): Promise<number> {
    const r = await db.updateTable('refresh_tokens').set({ revoked_at: at }).where('family_id', '=', familyId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Revokes every session of the user (password change, deactivation). */
  async revokeUser(db: Kysely<DB>, userId: string, at: string): Promise<void> {
    await db.updateTable('refresh_tokens').set({ revoked_at: at }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  }

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
