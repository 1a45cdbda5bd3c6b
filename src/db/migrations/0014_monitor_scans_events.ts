import { type Kysely, sql } from 'kysely';
import { timestamp, uuid } from './dialect.js';

/**
 * Monitor scans and the event outbox.
 *
 * - monitor_scans: a scan of the corpus for one monitor is a durable job. Its cursor moves in the
 *   transaction that writes each chunk's alerts, so a scan resumed after a crash or restart carries
 *   on where its last chunk committed. A lease (owner and expiry) lets any process take over a scan
 *   whose runner died. At most one scan per monitor is queued and one running (partial unique indexes).
 * - events: the transactional outbox. A domain event (alert.created, monitor.scan_completed, ...)
 *   is written in the transaction of its change, so it exists exactly when the change does;
 *   webhooks deliver from here.
 * - An index for the alert list's usual filters (status and severity, newest first): its count and
 *   its page read only the matching entries, however many alerts the organization has.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ts = timestamp(db);
  const id = uuid(db);
  await db.schema
    .createTable('monitor_scans')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('monitor_id', id, (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('terms', 'text')
    .addColumn('cursor', 'text')
    .addColumn('records_scanned', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('alerts_raised', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('started_at', ts)
    .addColumn('finished_at', ts)
    .execute();
  await db.schema.createIndex('monitor_scans_monitor_created_idx').on('monitor_scans').columns(['monitor_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('monitor_scans_status_created_idx').on('monitor_scans').columns(['status', 'created_at']).execute();
  for (const status of ['queued', 'running']) {
    await db.schema
      .createIndex(`monitor_scans_one_${status}_key`)
      .on('monitor_scans')
      .column('monitor_id')
      .unique()
      .where(sql.ref('status'), '=', status)
      .execute();
  }

  await db.schema.createIndex('monitor_alerts_org_status_severity_idx').on('monitor_alerts').columns(['organization_id', 'status', 'severity', 'created_at', 'id']).execute();

  await db.schema
    .createTable('events')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('organization_id', id, (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_created_idx').on('events').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.dropIndex('monitor_alerts_org_status_severity_idx').execute();
  await db.schema.dropTable('monitor_scans').execute();
}
