import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { type JsonField, jsonObjectText, jsonQuote } from '../../db/json.js';
import { prepared } from '../../db/prepared.js';
import type { DB } from '../../db/schema.js';
import type { TrackingTokenExposuresTable, TrackingTokensTable } from './tracking-tokens.tables.js';

export type TokenRow = Selectable<TrackingTokensTable>;
export type ExposureRow = Selectable<TrackingTokenExposuresTable>;
export type NewExposure = Insertable<TrackingTokenExposuresTable>;

/** What recording an exposure of a token needs. */
export type TokenTarget = Pick<TokenRow, 'id' | 'organization_id' | 'kind' | 'status' | 'redirect_url' | 'ignore_ips'>;
const TARGET = ['id', 'organization_id', 'kind', 'status', 'redirect_url', 'ignore_ips'] as const;

/** What a trigger key of no token finds: answered as a disabled web_bug is, recorded nowhere. */
export const NO_TOKEN: Readonly<TokenTarget> = {
  id: '00000000-0000-0000-0000-000000000000',
  organization_id: '00000000-0000-0000-0000-000000000000',
  kind: 'web_bug',
  status: 'disabled',
  redirect_url: null,
  ignore_ips: '[]',
};

/**
 * A token as the JSON text of TrackingTokenSchema (as the service's present() shows it, each kind's
 * material only), its trigger URL under `base`: a page goes out without its rows made objects and
 * serialised again. test/modules/tracking-tokens.test.ts holds it to the token's own GET.
 */
function tokenJson(dialect: Dialect, base: string): RawBuilder<string> {
  const t = 'tracking_tokens';
  const url = sql<string>`cast(${base} as text) || '/t/' || ${sql.ref(`${t}.trigger_key`)} || '/'`;
  return jsonObjectText(dialect, [
    { key: 'id', text: `${t}.id` },
    { key: 'name', text: `${t}.name` },
    { key: 'memo', text: `${t}.memo` },
    { key: 'kind', text: `${t}.kind` },
    { key: 'status', text: `${t}.status` },
    { key: 'ignore_ips', raw: `${t}.ignore_ips` },
    { key: 'exposure_count', raw: `${t}.exposure_count` },
    { key: 'last_exposed_at', time: `${t}.last_exposed_at` },
    { key: 'created_by', text: `${t}.created_by` },
    { key: 'created_at', time: `${t}.created_at` },
    { key: 'updated_at', time: `${t}.updated_at` },
    // The optional fields last, as the serializer writes them for a single token.
    { key: 'trigger_url', expr: jsonQuote(dialect, url), when: `${t}.trigger_key` },
    ...(['redirect_url', 'username', 'password', 'api_key'] as const).map((c): JsonField => ({ key: c, text: `${t}.${c}`, optional: true })),
  ]);
}

/** An exposure as the JSON text of ExposureSchema (as presentExposure shows it). */
function exposureJson(dialect: Dialect): RawBuilder<string> {
  const e = 'tracking_token_exposures';
  const source = jsonObjectText(dialect, [
    { key: 'id', text: `${e}.leak_source_id` },
    { key: 'name', text: `coalesce(${e}.leak_source_name, '')` },
  ]);
  return jsonObjectText(dialect, [
    { key: 'id', text: `${e}.id` },
    { key: 'token', text: `${e}.token_id` },
    { key: 'channel', text: `${e}.channel` },
    { key: 'occurred_at', time: `${e}.occurred_at` },
    ...(['source_ip', 'user_agent', 'referer', 'method', 'path'] as const).map((c): JsonField => ({ key: c, text: `${e}.${c}` })),
    { key: 'leak_record', text: `${e}.leak_record_id` },
    { key: 'leak_source', expr: sql<string>`(case when ${sql.ref(`${e}.leak_source_id`)} is null then 'null' else ${source} end)` },
    { key: 'severity', expr: sql<string>`(case when ${sql.ref(`${e}.indicator_matches`)} = '[]' then '"high"' else '"critical"' end)` },
    { key: 'indicator_matches', raw: `${e}.indicator_matches` },
  ]);
}

/** Every query of the tracking-token module. */
export class TrackingTokensRepository {
  /** The same for every request: built once. */
  private readonly exposureJson: RawBuilder<string>;

  constructor(private readonly dialect: Dialect) {
    this.exposureJson = exposureJson(dialect);
  }

  /** The organization's tokens, each as its JSON text (see tokenJson), in `json`. */
  selectTokenJson(db: Kysely<DB>, orgId: string, base: string) {
    return db.selectFrom('tracking_tokens').select(tokenJson(this.dialect, base).as('json')).where('tracking_tokens.organization_id', '=', orgId);
  }

  /**
   * A token's exposures, each as its JSON text, in `json`. Only for a token already read within
   * its organization: an exposure's organization is always its token's, so the count reads the
   * token's indexes alone.
   */
  selectExposureJson(db: Kysely<DB>, tokenId: string) {
    return db.selectFrom('tracking_token_exposures').select(this.exposureJson.as('json')).where('tracking_token_exposures.token_id', '=', tokenId);
  }

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

  /**
   * The token behind a trigger key: the one query every hit of /t/ makes. A key of no token answers
   * a disabled web_bug of no organization (NO_TOKEN) from the same query, so that a live and an
   * unknown key cost the same: both make one row of the same strings (a miss stopping in the index
   * was measurably cheaper than a hit making its row).
   */
  async byTriggerKey(db: Kysely<DB>, key: string): Promise<TokenTarget> {
    return (await this.triggerTarget(db, key))[0] ?? { ...NO_TOKEN };
  }

  private readonly triggerTarget = prepared((db: Kysely<DB>, key: string) =>
    db
      .selectFrom('tracking_tokens')
      .select([...TARGET, sql.lit(0).as('miss')])
      .where('trigger_key', '=', key)
      // A union pairs columns by position: NO_TOKEN's values in TARGET's order, as the first branch selects them.
      .unionAll(db.selectNoFrom([...TARGET.map((c) => sql.lit(NO_TOKEN[c]).$castTo<string>().as(c)), sql.lit(1).as('miss')]))
      .orderBy('miss')
      .limit(1),
  );

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
}
