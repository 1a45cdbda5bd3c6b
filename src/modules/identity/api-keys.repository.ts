import { type Kysely, type Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { ApiKeysTable } from './identity.tables.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** The queries on API keys. Every read but the authentication's lookup is scoped to an organization. */
export class ApiKeysRepository {
  insert(db: Kysely<DB>, row: Omit<ApiKeyRow, 'version'>) {
    return db.insertInto('api_keys').values(row).execute();
  }

  /** The organization's keys, or only those of one user. */
  selectInOrg(db: Kysely<DB>, orgId: string, userId: string | null) {
    let q = db.selectFrom('api_keys').selectAll().where('organization_id', '=', orgId);
    if (userId !== null) q = q.where('user_id', '=', userId);
    return q;
  }

  find(db: Kysely<DB>, orgId: string, userId: string | null, id: string) {
    return this.selectInOrg(db, orgId, userId).where('id', '=', id).executeTakeFirst();
  }

  update(db: Kysely<DB>, id: string, changes: Partial<Pick<ApiKeyRow, 'name' | 'role' | 'updated_at'>>) {
    return db
      .updateTable('api_keys')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  delete(db: Kysely<DB>, id: string) {
    return db.deleteFrom('api_keys').where('id', '=', id).execute();
  }

  /** The key whose hash this is, for the authentication. */
  byHash(db: Kysely<DB>, keyHash: string) {
    return db.selectFrom('api_keys').select(['id', 'organization_id', 'user_id', 'role', 'key_hash', 'expires_at']).where('key_hash', '=', keyHash).executeTakeFirst();
  }

  touch(db: Kysely<DB>, id: string, at: string) {
    return db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** Records that the key was used from `ip`: true the first time. */
  async addIp(db: Kysely<DB>, id: string, ip: string, at: string): Promise<boolean> {
    const rows = await db
      .insertInto('api_key_ips')
      .values({ api_key_id: id, ip, first_seen_at: at })
      .onConflict((oc) => oc.columns(['api_key_id', 'ip']).doNothing())
      .returning('ip')
      .execute();
    return rows.length > 0;
  }
}
