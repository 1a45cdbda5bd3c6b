import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * TAXII exposures kept a leak source's identity once per alert time, each version "first" and
 * "last" with its own `created` (STIX wants one `created` across an object's versions). Each
 * identity of the exposures collection keeps its first version only, first and latest; the
 * collections now add a version only when an identity changes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const yes = isPostgres(db) ? sql`true` : sql`1`;
  const no = isPostgres(db) ? sql`false` : sql`0`;
  await sql`
    delete from taxii_objects
    where collection = 'exposures' and type = 'identity'
      and pk not in (select min(pk) from taxii_objects where collection = 'exposures' and type = 'identity' group by organization_id, stix_id)`.execute(db);
  await sql`update taxii_objects set ${sql.ref('first')} = ${yes}, superseded = ${no} where collection = 'exposures' and type = 'identity'`.execute(db);
}

export async function down(): Promise<void> {
  // The duplicate versions carried nothing the one kept does not.
}
