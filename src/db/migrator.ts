import { type Kysely, type Migration, Migrator, PostgresAdapter, sql } from 'kysely';
import * as m0001 from './migrations/0001_organizations_users.js';
import * as m0002 from './migrations/0002_incidents.js';
import * as m0003 from './migrations/0003_leaks.js';
import * as m0004 from './migrations/0004_leak_bulk_loads.js';
import * as m0005 from './migrations/0005_leak_domain_counts.js';
import * as m0006 from './migrations/0006_leak_search_words.js';
import * as m0007 from './migrations/0007_leak_record_keys.js';
import * as m0008 from './migrations/0008_leak_search_vocabulary.js';
import * as m0009 from './migrations/0009_leak_fts_prefix_index.js';
import * as m0010 from './migrations/0010_leak_lean_indexes.js';
import * as m0011 from './migrations/0011_leak_bulk_load_heartbeat.js';
import * as m0012 from './migrations/0012_usernames_ignore_case.js';
import * as m0013 from './migrations/0013_monitoring.js';
import * as m0014 from './migrations/0014_monitor_scans_events.js';
import * as m0015 from './migrations/0015_tracking_tokens.js';
import * as m0016 from './migrations/0016_webhooks.js';
import * as m0017 from './migrations/0017_incident_status_severity_order.js';
import * as m0018 from './migrations/0018_monitor_alert_counts.js';
import * as m0019 from './migrations/0019_webhook_messages_due_per_webhook.js';
import * as m0020 from './migrations/0020_monitor_alert_record_json.js';
import * as m0021 from './migrations/0021_leak_email_domains.js';
import * as m0022 from './migrations/0022_leak_source_kinds.js';
import * as m0023 from './migrations/0023_severity_by_exposure.js';
import * as m0024 from './migrations/0024_api_keys.js';
import * as m0025 from './migrations/0025_hibp_breach_domains_ntlm.js';
import * as m0026 from './migrations/0026_taxii.js';
import * as m0027 from './migrations/0027_notifications.js';
import * as m0028 from './migrations/0028_leak_created_at.js';
import * as m0029 from './migrations/0029_leak_search_expression.js';
import * as m0030 from './migrations/0030_leak_index_fillfactor.js';
import * as m0031 from './migrations/0031_taxii_shared_once.js';
import * as m0032 from './migrations/0032_feeds_indicators.js';
import * as m0033 from './migrations/0033_indicator_matches.js';

/** Listed in code, not read from a folder, so they run the same from src/ (tsx) and dist/. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_organizations_users': m0001,
  '0002_incidents': m0002,
  '0003_leaks': m0003,
  '0004_leak_bulk_loads': m0004,
  '0005_leak_domain_counts': m0005,
  '0006_leak_search_words': m0006,
  '0007_leak_record_keys': m0007,
  '0008_leak_search_vocabulary': m0008,
  '0009_leak_fts_prefix_index': m0009,
  '0010_leak_lean_indexes': m0010,
  '0011_leak_bulk_load_heartbeat': m0011,
  '0012_usernames_ignore_case': m0012,
  '0013_monitoring': m0013,
  '0014_monitor_scans_events': m0014,
  '0015_tracking_tokens': m0015,
  '0016_webhooks': m0016,
  '0017_incident_status_severity_order': m0017,
  '0018_monitor_alert_counts': m0018,
  '0019_webhook_messages_due_per_webhook': m0019,
  '0020_monitor_alert_record_json': m0020,
  '0021_leak_email_domains': m0021,
  '0022_leak_source_kinds': m0022,
  '0023_severity_by_exposure': m0023,
  '0024_api_keys': m0024,
  '0025_hibp_breach_domains_ntlm': m0025,
  '0026_taxii': m0026,
  '0027_notifications': m0027,
  '0028_leak_created_at': m0028,
  '0029_leak_search_expression': m0029,
  '0030_leak_index_fillfactor': m0030,
  '0031_taxii_shared_once': m0031,
  '0032_feeds_indicators': m0032,
  '0033_indicator_matches': m0033,
};

/** PostgreSQL: the connection's current schema (the one its search_path puts first). */
export async function currentSchema(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? '';
}

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // On PostgreSQL the bookkeeping tables go in the connection's current schema: the migrator's
  // own existence check looks across every schema and would otherwise be fooled by another one.
  let migrationTableSchema: string | undefined;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    migrationTableSchema = await currentSchema(db);
  }
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS }, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
