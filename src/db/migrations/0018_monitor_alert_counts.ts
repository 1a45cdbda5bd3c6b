import { type Kysely, sql } from 'kysely';
import { isPostgres, uuid } from './dialect.js';

/**
 * Alert counts by (monitor, status, severity), kept by triggers on monitor_alerts, so that they stay
 * true to the table whatever changes it: the matcher, scans, triage, and deletions cascading from a
 * monitor, an organization or a leak source.
 *
 * Each change appends a delta row (+1 or -1 per alert): concurrent writers only insert, so they never
 * wait for one another on a shared counter row (nor deadlock on two of them). A count is the sum of
 * its key's rows; a background job folds each key's rows into one (see MonitoringRepository).
 * No foreign keys: a cascading delete appends the -1 rows of a monitor that is being deleted; they
 * cancel its +1 rows and the folding drops keys that sum to zero.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const id = uuid(db);
  await db.schema
    .createTable('monitor_alert_counts')
    .addColumn('organization_id', id, (c) => c.notNull())
    .addColumn('monitor_id', id, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('monitor_alert_counts_monitor_idx').on('monitor_alert_counts').columns(['monitor_id', 'status', 'severity']).execute();
  await db.schema.createIndex('monitor_alert_counts_org_idx').on('monitor_alert_counts').columns(['organization_id', 'status', 'severity', 'n']).execute();
  // A monitor's last match without reading all its alerts.
  await db.schema.createIndex('monitor_alerts_monitor_created_idx').on('monitor_alerts').columns(['monitor_id', 'created_at']).execute();
  await sql`insert into monitor_alert_counts (organization_id, monitor_id, status, severity, n)
    select organization_id, monitor_id, status, severity, count(*) from monitor_alerts group by organization_id, monitor_id, status, severity`.execute(db);

  const columns = 'monitor_alert_counts (organization_id, monitor_id, status, severity, n)';
  if (isPostgres(db)) {
    // Statement triggers with transition tables: one grouped insert per statement, not one per alert.
    // search_path from current: the function finds this schema's table whoever calls it.
    const fn = (name: string, body: string) =>
      sql`create function ${sql.raw(name)}() returns trigger language plpgsql set search_path from current as $$ begin ${sql.raw(body)} return null; end $$`.execute(db);
    await fn('monitor_alerts_count_insert', `insert into ${columns} select organization_id, monitor_id, status, severity, count(*) from new_rows group by 1, 2, 3, 4;`);
    await fn('monitor_alerts_count_delete', `insert into ${columns} select organization_id, monitor_id, status, severity, -count(*) from old_rows group by 1, 2, 3, 4;`);
    await fn(
      'monitor_alerts_count_update',
      `insert into ${columns} select organization_id, monitor_id, status, severity, sum(n) from (
         select organization_id, monitor_id, status, severity, -1 as n from old_rows
         union all select organization_id, monitor_id, status, severity, 1 from new_rows) d
       group by 1, 2, 3, 4 having sum(n) <> 0;`,
    );
    await sql`create trigger monitor_alerts_count_insert after insert on monitor_alerts referencing new table as new_rows for each statement execute function monitor_alerts_count_insert()`.execute(db);
    await sql`create trigger monitor_alerts_count_delete after delete on monitor_alerts referencing old table as old_rows for each statement execute function monitor_alerts_count_delete()`.execute(db);
    await sql`create trigger monitor_alerts_count_update after update on monitor_alerts referencing old table as old_rows new table as new_rows for each statement execute function monitor_alerts_count_update()`.execute(db);
  } else {
    await sql`create trigger monitor_alerts_count_insert after insert on monitor_alerts begin
      insert into ${sql.raw(columns)} values (new.organization_id, new.monitor_id, new.status, new.severity, 1); end`.execute(db);
    await sql`create trigger monitor_alerts_count_delete after delete on monitor_alerts begin
      insert into ${sql.raw(columns)} values (old.organization_id, old.monitor_id, old.status, old.severity, -1); end`.execute(db);
    await sql`create trigger monitor_alerts_count_update after update of status, severity on monitor_alerts
      when old.status is not new.status or old.severity is not new.severity begin
      insert into ${sql.raw(columns)} values (old.organization_id, old.monitor_id, old.status, old.severity, -1), (new.organization_id, new.monitor_id, new.status, new.severity, 1); end`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['insert', 'delete', 'update']) {
    await sql`drop trigger if exists ${sql.raw(`monitor_alerts_count_${t}`)}${sql.raw(isPostgres(db) ? ' on monitor_alerts' : '')}`.execute(db);
    if (isPostgres(db)) await sql`drop function if exists ${sql.raw(`monitor_alerts_count_${t}`)}()`.execute(db);
  }
  await db.schema.dropIndex('monitor_alerts_monitor_created_idx').execute();
  await db.schema.dropTable('monitor_alert_counts').execute();
}
