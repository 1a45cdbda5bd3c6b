import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * Severity from what leaked. Each record gets `severity` (low: no secret, medium: a password hash,
 * high: a plaintext password, critical: a stealer-log credential, a URL or app with login and
 * password), filled in here for the records there are; each alert's record JSON shows it. A
 * monitor's severity may be null: its alerts then take their record's. Existing monitors keep the
 * severity they have. SQLite cannot drop a NOT NULL, so monitors.severity is copied to a new column.
 *
 * The rule is a frozen copy of domain/leak-record.ts's recordSeverity when this was added.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema.alterTable('leak_records').addColumn('severity', 'text', (c) => c.notNull().defaultTo('low')).execute();
  const has = (key: string) => (pg ? sql`(leak_records.extra::jsonb ? ${key})` : sql`(json_type(leak_records.extra, ${`$.${key}`}) is not null)`);
  await sql`update leak_records set severity = case
      when password_masked is not null then case when ${has('url')} or ${has('app')} then 'critical' else 'high' end
      when password_sha1 is not null or ${has('password_hash')} then 'medium'
      else 'low' end
    where password_sha1 is not null or extra <> '{}'`.execute(db);

  const severityOf = sql`(select leak_records.severity from leak_records where leak_records.id = monitor_alerts.leak_record_id)`;
  await sql`update monitor_alerts set record_json = ${pg ? sql`(record_json::jsonb || jsonb_build_object('severity', ${severityOf}))::text` : sql`json_set(record_json, '$.severity', ${severityOf})`}
    where record_json is not null`.execute(db);

  if (pg) {
    await sql`alter table monitors alter column severity drop not null`.execute(db);
  } else {
    await db.schema.alterTable('monitors').addColumn('alert_severity', 'text').execute();
    await sql`update monitors set alert_severity = severity`.execute(db);
    await db.schema.alterTable('monitors').dropColumn('severity').execute();
    await db.schema.alterTable('monitors').renameColumn('alert_severity', 'severity').execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`update monitors set severity = 'medium' where severity is null`.execute(db);
  if (isPostgres(db)) {
    await sql`alter table monitors alter column severity set not null`.execute(db);
  } else {
    await db.schema.alterTable('monitors').addColumn('fixed_severity', 'text', (c) => c.notNull().defaultTo('medium')).execute();
    await sql`update monitors set fixed_severity = severity`.execute(db);
    await db.schema.alterTable('monitors').dropColumn('severity').execute();
    await db.schema.alterTable('monitors').renameColumn('fixed_severity', 'severity').execute();
  }
  await sql`update monitor_alerts set record_json = ${isPostgres(db) ? sql`(record_json::jsonb - 'severity')::text` : sql`json_remove(record_json, '$.severity')`} where record_json is not null`.execute(db);
  await db.schema.alterTable('leak_records').dropColumn('severity').execute();
}
