import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';

/**
 * Each alert keeps its leak record's JSON text (as LeakRecordSchema shows it), written with the
 * alert: a page of alerts no longer joins each alert to its record and source and builds that
 * JSON again on every read (on PostgreSQL, two thirds of the alert list's server time). A record
 * never changes once stored; its source's name can, and the monitoring module rewrites the text of
 * that source's alerts in the rename's transaction.
 *
 * The backfill's expressions are frozen copies of what leaks.repository.ts wrote when this was added.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitor_alerts').addColumn('record_json', 'text').execute();
  const record = isPostgres(db)
    ? sql`(select row_to_json(o) from (select leak_records.id,
        (select row_to_json(s) from (select leak_records.source_id as id, leak_sources.name) as s) as source,
        leak_records.email, leak_records.username, leak_records.domain, leak_records.ip, leak_records.phone,
        leak_records.full_name, leak_records.password_masked, left(leak_records.password_sha1, 5) as password_sha1_prefix,
        leak_records.password_sha1 is not null as has_password, leak_records.extra::json as extra,
        to_char(leak_records.leaked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as leaked_at,
        to_char(leak_records.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at) as o)::text`
    : sql`json_object('id', leak_records.id,
        'source', json_object('id', leak_records.source_id, 'name', leak_sources.name),
        'email', leak_records.email, 'username', leak_records.username, 'domain', leak_records.domain,
        'ip', leak_records.ip, 'phone', leak_records.phone, 'full_name', leak_records.full_name,
        'password_masked', leak_records.password_masked, 'password_sha1_prefix', substr(leak_records.password_sha1, 1, 5),
        'has_password', json(case when leak_records.password_sha1 is null then 'false' else 'true' end),
        'extra', json(leak_records.extra), 'leaked_at', leak_records.leaked_at, 'created_at', leak_records.created_at)`;
  await sql`update monitor_alerts set record_json = (select ${record} from leak_records
    inner join leak_sources on leak_sources.id = leak_records.source_id where leak_records.id = monitor_alerts.leak_record_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('monitor_alerts').dropColumn('record_json').execute();
}
