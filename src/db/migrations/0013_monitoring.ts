import type { Kysely } from 'kysely';
import { timestamp, uuid } from './dialect.js';

/**
 * Monitoring (API.md section 4): monitors, each with its normalised terms (a JSON array), and the
 * alerts they raise, unique per (monitor, leak record, term) so that concurrent ingests and scans
 * never raise one twice. Deleting a monitor removes its alerts; an incident keeps its data.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema
    .createTable('monitors')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('created_by', id)
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('last_scan_at', ts)
    .execute();
  await db.schema.createIndex('monitors_org_created_idx').on('monitors').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('monitor_alerts')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('monitor_id', id, (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('leak_record_id', id, (c) => c.notNull().references('leak_records.id').onDelete('cascade'))
    .addColumn('matched_term', 'text', (c) => c.notNull())
    .addColumn('matched_field', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('incident_id', id, (c) => c.references('incidents.id').onDelete('set null'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('monitor_alerts_match_key', ['monitor_id', 'leak_record_id', 'matched_term'])
    .execute();
  await db.schema.createIndex('monitor_alerts_org_created_idx').on('monitor_alerts').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('monitor_alerts_monitor_status_idx').on('monitor_alerts').columns(['monitor_id', 'status', 'created_at']).execute();

  // Bumped in the transaction of every change to monitors: each process's matcher rebuilds its
  // index when the number it read last differs, so no ingest matches against stale monitors.
  await db.schema
    .createTable('monitor_generation')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('monitor_generation').values({ id: 1, n: 0 }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('monitor_generation').execute();
  await db.schema.dropTable('monitor_alerts').execute();
  await db.schema.dropTable('monitors').execute();
}
