import { type InferResult, type Kysely, type Selectable, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { UsersTable } from './identity.tables.js';
import type { Role } from '../../domain/roles.js';

export type UserRow = Selectable<UsersTable>;

export interface User {
  id: string;
  organization_id: string;
  username: string;
  email: string;
  role: Role;
  is_active: boolean;
  is_staff: boolean;
  version: number;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
  password_hash: string;
}

export function toUser(row: UserRow): User {
  return { ...row, role: row.role as Role, is_active: Boolean(row.is_active), is_staff: Boolean(row.is_staff) };
}

/** The only place with queries on users. Every read but login's is scoped to an organization. */
export class UsersRepository {
  /** The users of an organization, for its list (filtered and paged by the caller). */
  selectInOrg(db: Kysely<DB>, orgId: string) {
    return db.selectFrom('users').selectAll().where('organization_id', '=', orgId);
  }

  /**
   * A user with its organization's name and plan: who a token's subject is, asked by the
   * authentication hook for every request it does not remember. Compiled once, run with the id.
   */
  principalLookup(db: Kysely<DB>) {
    const select = db
      .selectFrom('users')
      .innerJoin('organizations', 'organizations.id', 'users.organization_id')
      .selectAll('users')
      .select(['organizations.name as org_name', 'organizations.plan as org_plan'])
      .where('users.id', '=', '');
    const compiled = select.compile();
    return async (userId: string) => (await db.executeQuery<InferResult<typeof select>[number]>({ ...compiled, parameters: [userId] })).rows[0];
  }

  /** Usernames are unique ignoring case (the index on lower(username) of migration 0012). */
  findByUsername(db: Kysely<DB>, username: string) {
    return db.selectFrom('users').selectAll().where(sql`lower(username)`, '=', sql`lower(${username})`).executeTakeFirst().then((r) => r && toUser(r));
  }

  findById(db: Kysely<DB>, id: string) {
    return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst().then((r) => r && toUser(r));
  }

  findInOrg(db: Kysely<DB>, orgId: string, id: string) {
    return db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', id)
      .where('organization_id', '=', orgId)
      .executeTakeFirst()
      .then((r) => r && toUser(r));
  }

  usernameTaken(db: Kysely<DB>, username: string) {
    return db.selectFrom('users').select('id').where(sql`lower(username)`, '=', sql`lower(${username})`).executeTakeFirst().then(Boolean);
  }

  insert(db: Kysely<DB>, row: Omit<UserRow, 'version'>) {
    return db.insertInto('users').values(row).execute();
  }

  /** Bumps the version (the ETag) with every change. */
  update(db: Kysely<DB>, id: string, changes: Partial<Pick<UserRow, 'role' | 'email' | 'is_active' | 'password_hash' | 'updated_at'>>) {
    return db
      .updateTable('users')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  touchLogin(db: Kysely<DB>, id: string, at: string) {
    return db.updateTable('users').set({ last_login_at: at }).where('id', '=', id).execute();
  }

  delete(db: Kysely<DB>, id: string) {
    return db.deleteFrom('users').where('id', '=', id).execute();
  }

  /** Active owners other than `exceptId`: the last one may not be demoted, deactivated or removed. */
  async otherActiveOwners(db: Kysely<DB>, orgId: string, exceptId: string): Promise<number> {
    const r = await db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('organization_id', '=', orgId)
      .where('role', '=', 'owner')
      .where('is_active', '=', true)
      .where('id', '!=', exceptId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
