import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { OrganizationsTable } from './organizations.tables.js';

export type OrganizationRow = Selectable<OrganizationsTable> & { member_count: number };

export class OrganizationsRepository {
  /** Organizations with their member counts (one grouped subquery, no N+1). */
  select(db: Kysely<DB>) {
    return db
      .selectFrom('organizations')
      .selectAll('organizations')
      .select((eb) =>
        eb
          .selectFrom('users')
          .select((e) => e.fn.countAll().as('n'))
          .whereRef('users.organization_id', '=', 'organizations.id')
          .as('member_count'),
      );
  }

  async findById(db: Kysely<DB>, id: string): Promise<OrganizationRow | undefined> {
    const row = await this.select(db).where('organizations.id', '=', id).executeTakeFirst();
    return row && { ...row, member_count: Number(row.member_count ?? 0) };
  }

  /** The names of these organizations (no member counts), for presenting many at once. */
  names(db: Kysely<DB>, ids: readonly string[]) {
    return db.selectFrom('organizations').select(['id', 'name', 'created_at']).where('id', 'in', ids).execute();
  }

  /** Whether the database holds any organization (an empty one gets the first admin). */
  async any(db: Kysely<DB>): Promise<boolean> {
    return Boolean(await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst());
  }

  findByName(db: Kysely<DB>, name: string) {
    return db.selectFrom('organizations').selectAll().where('name', '=', name).executeTakeFirst();
  }

  insert(db: Kysely<DB>, row: Omit<Selectable<OrganizationsTable>, 'version'>) {
    return db.insertInto('organizations').values(row).execute();
  }

  update(db: Kysely<DB>, id: string, changes: { name?: string; plan?: string; updated_at: string }) {
    return db
      .updateTable('organizations')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }
}
