import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, TrackingTokenExposuresTable, TrackingTokensTable } from '../../db/schema.js';

export type TokenRow = Selectable<TrackingTokensTable>;
export type ExposureRow = Selectable<TrackingTokenExposuresTable>;
export type NewExposure = Insertable<TrackingTokenExposuresTable>;

/** What recording an exposure of a token needs. */
export type TokenTarget = Pick<TokenRow, 'id' | 'organization_id' | 'kind' | 'status' | 'redirect_url' | 'ignore_ips'>;
const TARGET = ['id', 'organization_id', 'kind', 'status', 'redirect_url', 'ignore_ips'] as const;

/** Every query of the tracking-token module. */
export class TrackingTokensRepository {
  selectTokens(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('tracking_tokens').selectAll().where('tracking_tokens.organization_id', '=', orgId);
  }

  findToken(db: Kysely<DB>, orgId: string, id: string): Promise<TokenRow | undefined> {
    return this.selectTokens(db, orgId).where('id', '=', id).executeTakeFirst();
  }

  async insertToken(db: Kysely<DB>, row: Insertable<TrackingTokensTable>): Promise<void> {
    await db.insertInto('tracking_tokens').values(row).execute();
  }

  async updateToken(db: Kysely<DB>, id: string, set: Partial<Pick<TokenRow, 'name' | 'memo' | 'status' | 'ignore_ips' | 'updated_at'>>): Promise<void> {
    await db
      .updateTable('tracking_tokens')
      .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  async deleteToken(db: Kysely<DB>, id: string): Promise<void> {
    await db.deleteFrom('tracking_tokens').where('id', '=', id).execute();
  }

  async countTokens(db: Kysely<DB>, orgId: string): Promise<number> {
    return Number((await db.selectFrom('tracking_tokens').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', orgId).executeTakeFirstOrThrow()).n);
  }

  /** Whether a credential token has this login name (lower-cased). */
  async usernameTaken(db: Kysely<DB>, lower: string): Promise<boolean> {
    return (await db.selectFrom('tracking_tokens').select('id').where('username_lower', '=', lower).executeTakeFirst()) !== undefined;
  }

  /** The token behind a trigger key: the one query every hit of /t/ makes, known key or not. */
  byTriggerKey(db: Kysely<DB>, key: string): Promise<TokenTarget | undefined> {
    return db.selectFrom('tracking_tokens').select(TARGET).where('trigger_key', '=', key).executeTakeFirst();
  }

  byUsername(db: Kysely<DB>, lower: string): Promise<TokenTarget | undefined> {
    return db.selectFrom('tracking_tokens').select(TARGET).where('username_lower', '=', lower).executeTakeFirst();
  }

  byApiKey(db: Kysely<DB>, key: string): Promise<TokenTarget | undefined> {
    return db.selectFrom('tracking_tokens').select(TARGET).where('api_key', '=', key).executeTakeFirst();
  }

  /** The active tokens leaked data can expose (every kind has something to find). */
  activeForLeaks(db: Kysely<DB>) {
    return db
      .selectFrom('tracking_tokens')
      .select(['id', 'organization_id', 'kind', 'trigger_key', 'username_lower', 'password_sha1', 'api_key', 'api_key_sha1'])
      .where('status', '=', 'active')
      .execute();
  }

  async generation(db: Kysely<DB>): Promise<number> {
    return Number((await db.selectFrom('tracking_token_generation').select('n').where('id', '=', 1).executeTakeFirstOrThrow()).n);
  }

  async bumpGeneration(db: Kysely<DB>): Promise<void> {
    await db.updateTable('tracking_token_generation').set((eb) => ({ n: eb('n', '+', 1) })).where('id', '=', 1).execute();
  }

  /**
   * Counts one exposure on its token if fewer than `cap` were recorded since `since`: the update
   * and its check are one statement, so the token's row lock orders concurrent recorders. False
   * when the cap is reached (nothing changes).
   */
  async countExposure(db: Kysely<DB>, tokenId: string, at: string, since: string, cap: number): Promise<boolean> {
    const recent = db
      .selectFrom('tracking_token_exposures')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('token_id', '=', tokenId)
      .where('occurred_at', '>', since)
      .where('channel', '!=', 'leak');
    const r = await db
      .updateTable('tracking_tokens')
      .set((eb) => ({ exposure_count: eb('exposure_count', '+', 1), last_exposed_at: at }))
      .where('id', '=', tokenId)
      .where(recent, '<', cap)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async insertExposure(db: Kysely<DB>, row: NewExposure): Promise<void> {
    await db.insertInto('tracking_token_exposures').values(row).execute();
  }

  /** Leak exposures, each (token, record) once; the new ones. */
  async insertLeakExposures(db: Kysely<DB>, rows: NewExposure[]): Promise<ExposureRow[]> {
    const inserted: ExposureRow[] = [];
    for (let i = 0; i < rows.length; i += 500) {
      inserted.push(
        ...(await db
          .insertInto('tracking_token_exposures')
          .values(rows.slice(i, i + 500))
          .onConflict((oc) => oc.columns(['token_id', 'leak_record_id']).where('leak_record_id', 'is not', null).doNothing())
          .returningAll()
          .execute()),
      );
    }
    return inserted;
  }

  async addExposures(db: Kysely<DB>, tokenId: string, n: number, at: string): Promise<void> {
    await db
      .updateTable('tracking_tokens')
      .set((eb) => ({ exposure_count: eb('exposure_count', '+', n), last_exposed_at: at }))
      .where('id', '=', tokenId)
      .execute();
  }

  selectExposures(db: Kysely<DB>, orgId: string, tokenId: string) {
    return db.selectFrom('tracking_token_exposures').selectAll().where('tracking_token_exposures.organization_id', '=', orgId).where('tracking_token_exposures.token_id', '=', tokenId);
  }
}
