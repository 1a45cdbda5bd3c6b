import { type Kysely, sql } from 'kysely';
import { isPostgres, timestamp, uuid } from './dialect.js';

/**
 * TAXII 2.1 (modules/taxii): each organization's collections, with ids that never change, and the
 * objects they serve, one row per STIX object version. A version is written by the transaction of
 * its change with added_us null; the reader stamps pending rows, under a lock per organization, with
 * microsecond date_added values that only grow, so an object's date_added is the moment it became
 * visible and paging by date_added (or by `next`) returns each object exactly once.
 * IOCs get an expiry, the indicator's valid_until.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema.alterTable('iocs').addColumn('expires_at', ts).execute();
  await db.schema
    .createTable('taxii_collections')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addUniqueConstraint('taxii_collections_org_kind_key', ['organization_id', 'kind'])
    .execute();
  await db.schema
    .createTable('taxii_objects')
    .addColumn('pk', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('collection', 'text', (c) => c.notNull())
    .addColumn('stix_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // The object's modified (or created) timestamp; '' for objects without one (observables), whose
    // version is their date_added.
    .addColumn('version', 'text', (c) => c.notNull())
    // Microseconds since the epoch; null until stamped (see above).
    .addColumn('added_us', 'bigint')
    .addColumn('first', pg ? 'boolean' : 'integer', (c) => c.notNull())
    .addColumn('superseded', pg ? 'boolean' : 'integer', (c) => c.notNull())
    .addColumn('object', 'text', (c) => c.notNull())
    .execute();
  // Dates are unique within an organization: paging by date_added is exact.
  await db.schema.createIndex('taxii_objects_added_key').unique().on('taxii_objects').columns(['organization_id', 'added_us']).execute();
  await db.schema.createIndex('taxii_objects_collection_added_idx').on('taxii_objects').columns(['organization_id', 'collection', 'added_us']).execute();
  // A version is kept once, also when two transactions write the same shared object.
  await db.schema.createIndex('taxii_objects_version_key').unique().on('taxii_objects').columns(['organization_id', 'collection', 'stix_id', 'version']).execute();
  await sql`create index taxii_objects_pending_idx on taxii_objects (organization_id, pk) where added_us is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('taxii_objects').execute();
  await db.schema.dropTable('taxii_collections').execute();
  await db.schema.alterTable('iocs').dropColumn('expires_at').execute();
}
