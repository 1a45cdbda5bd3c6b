import type { Kysely } from 'kysely';
import { timestamp, uuid } from './dialect.js';

export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);

  await db.schema
    .createTable('incidents')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    // 1 low .. 4 critical: ordering by severity means ordering by rank, not alphabetically.
    .addColumn('severity_rank', 'integer', (c) => c.notNull())
    .addColumn('tlp', 'text', (c) => c.notNull())
    // JSON array of strings.
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('assignee_id', id, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('source_alert_id', id)
    .addColumn('ioc_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('resolved_at', ts)
    .addColumn('closed_at', ts)
    .execute();
  // The default listing and the common status/severity filters, newest first.
  await db.schema.createIndex('incidents_org_created_idx').on('incidents').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('incidents_org_sev_created_idx').on('incidents').columns(['organization_id', 'severity', 'created_at', 'id']).execute();
  await db.schema.createIndex('incidents_org_status_sev_idx').on('incidents').columns(['organization_id', 'status', 'severity']).execute();
  await db.schema.createIndex('incidents_org_updated_idx').on('incidents').columns(['organization_id', 'updated_at', 'id']).execute();

  // Incidents per (organization, status, severity), kept in the same transaction as every change:
  // list counts for status/severity filters and the stats read these instead of scanning.
  await db.schema
    .createTable('incident_counters')
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('incident_counters_pk', ['organization_id', 'status', 'severity'])
    .execute();

  await db.schema
    .createTable('iocs')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('incident_id', id, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('tlp', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('first_seen', ts)
    .addColumn('last_seen', ts)
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('iocs_incident_type_value_key', ['incident_id', 'type', 'value'])
    .execute();
  await db.schema.createIndex('iocs_incident_created_idx').on('iocs').columns(['incident_id', 'created_at', 'id']).execute();
  // Correlation: the same value across an organization's incidents.
  await db.schema.createIndex('iocs_org_value_idx').on('iocs').columns(['organization_id', 'value', 'type']).execute();
  await db.schema.createIndex('iocs_org_created_idx').on('iocs').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('incident_events')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('incident_id', id, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', id)
    .addColumn('changes', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('ioc_id', id)
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_events_incident_idx').on('incident_events').columns(['incident_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('incident_comments')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('incident_id', id, (c) => c.notNull().references('incidents.id').onDelete('cascade'))
    .addColumn('author_id', id)
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_comments_incident_idx').on('incident_comments').columns(['incident_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['incident_comments', 'incident_events', 'iocs', 'incident_counters', 'incidents']) await db.schema.dropTable(t).execute();
}
