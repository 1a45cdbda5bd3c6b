import type { ColumnType, Generated } from 'kysely';

/** Row types as stored. Timestamps are ISO strings on both dialects; booleans are 0/1 on SQLite. */
export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface UsersTable {
  id: string;
  organization_id: string;
  username: string;
  email: string;
  password_hash: string;
  role: string;
  is_active: boolean | number;
  is_staff: boolean | number;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export interface RefreshTokensTable {
  jti: string;
  user_id: string;
  family_id: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

export interface AuditLogTable {
  id: string;
  organization_id: string | null;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  ip: string | null;
  /** JSON text: {field: {from, to}} or any object describing the change. */
  changes: string;
  created_at: string;
}

export interface DB {
  organizations: OrganizationsTable;
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  audit_log: AuditLogTable;
  incidents: IncidentsTable;
  incident_counters: IncidentCountersTable;
  iocs: IocsTable;
  incident_events: IncidentEventsTable;
  incident_comments: IncidentCommentsTable;
  leak_sources: LeakSourcesTable;
  leak_records: LeakRecordsTable;
  leak_counters: LeakCountersTable;
  /** Records per reversed domain (`key`). */
  leak_domain_counts: LeakCountersTable;
  /** PostgreSQL only: every full-text lexeme of the records (migration 0008). */
  leak_words: { word: string };
  saved_searches: SavedSearchesTable;
  monitors: MonitorsTable;
  monitor_alerts: MonitorAlertsTable;
  monitor_alert_counts: MonitorAlertCountsTable;
  monitor_generation: { id: number; n: number };
  monitor_scans: MonitorScansTable;
  events: EventsTable;
  tracking_tokens: TrackingTokensTable;
  tracking_token_exposures: TrackingTokenExposuresTable;
  tracking_token_generation: { id: number; n: number };
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  api_keys: ApiKeysTable;
  api_key_ips: { api_key_id: string; ip: string; first_seen_at: string };
  taxii_collections: { id: string; organization_id: string; kind: string; created_at: string };
  taxii_objects: TaxiiObjectsTable;
  notification_channels: NotificationChannelsTable;
  notification_messages: NotificationMessagesTable;
}

export interface TaxiiObjectsTable {
  pk: Generated<number>;
  organization_id: string;
  collection: string;
  stix_id: string;
  type: string;
  version: string;
  added_us: number | null;
  first: boolean | number;
  superseded: boolean | number;
  object: string;
}

/** API keys (migration 0024): the key itself is never stored, only its SHA-256. */
export interface ApiKeysTable {
  id: string;
  organization_id: string;
  user_id: string;
  name: string;
  role: string;
  prefix: string;
  key_hash: string;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface IncidentsTable {
  id: string;
  organization_id: string;
  title: string;
  description: string;
  status: string;
  severity: string;
  severity_rank: number;
  tlp: string;
  /** JSON array of strings. */
  tags: string;
  assignee_id: string | null;
  source_alert_id: string | null;
  ioc_count: Generated<number>;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  closed_at: string | null;
}

export interface IncidentCountersTable {
  organization_id: string;
  status: string;
  severity: string;
  n: number;
}

export interface IocsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  type: string;
  value: string;
  description: string;
  tlp: string;
  tags: string;
  first_seen: string | null;
  last_seen: string | null;
  expires_at: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface IncidentEventsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  kind: string;
  actor_id: string | null;
  changes: string;
  ioc_id: string | null;
  created_at: string;
}

export interface IncidentCommentsTable {
  id: string;
  organization_id: string;
  incident_id: string;
  author_id: string | null;
  body: string;
  created_at: string;
}

export interface LeakSourcesTable {
  id: string;
  name: string;
  description: string;
  /** The breached site's domain (migration 0025). */
  domain: string | null;
  breach_date: string | null;
  discovered_at: string | null;
  /** JSON array of data classes. */
  data_classes: string;
  is_verified: boolean | number;
  /** breach, combolist, stealer_log, paste or other (migration 0022). */
  kind: Generated<string>;
  is_fabricated: Generated<boolean | number>;
  is_sensitive: Generated<boolean | number>;
  is_spam_list: Generated<boolean | number>;
  record_count: Generated<number>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface LeakRecordsTable {
  id: string;
  source_id: string;
  email: string | null;
  username: string | null;
  username_lower: string | null;
  domain: string | null;
  domain_rev: string | null;
  ip: string | null;
  ip_key: string | null;
  phone: string | null;
  full_name: string | null;
  password_sha1: string | null;
  password_masked: string | null;
  /** JSON object of strings. */
  extra: string;
  leaked_at: string | null;
  /** 16 bytes: recordKey(source_id, content fingerprint), unique. */
  fingerprint: Uint8Array;
  search_text: string;
  /** The e-mail address's reversed domain when it is not `domain`, else null (migration 0021). */
  email_domain_rev: string | null;
  /** What the record exposes: low, medium, high or critical (migration 0023, domain/leak-record.ts recordSeverity). */
  severity: string;
  /** NTLM (MD4 of UTF-16LE) of the plaintext password, upper-case hex (migration 0025). */
  password_ntlm: string | null;
  created_at: string;
}

export interface LeakCountersTable {
  key: string;
  n: number;
}

export interface SavedSearchesTable {
  id: string;
  organization_id: string;
  name: string;
  /** JSON object of search parameters. */
  query: string;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_run_at: string | null;
  last_result_count: number | null;
}

export interface MonitorsTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  type: string;
  /** JSON array of the normalised terms. */
  terms: string;
  status: string;
  /** The severity of its alerts; null: each alert takes its record's (migration 0023). */
  severity: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
  last_scan_at: string | null;
}

/** Alert count deltas by key, appended by triggers on monitor_alerts (migration 0018); a count is the sum of its key's rows. */
export interface MonitorAlertCountsTable {
  organization_id: string;
  monitor_id: string;
  status: string;
  severity: string;
  n: number;
}

export interface MonitorAlertsTable {
  id: string;
  organization_id: string;
  monitor_id: string;
  leak_record_id: string;
  matched_term: string;
  matched_field: string;
  severity: string;
  status: string;
  note: string;
  incident_id: string | null;
  /** The leak record's JSON text, as LeakRecordSchema shows it (migration 0020); written by insertAlerts right after the row. */
  record_json: ColumnType<string, undefined, string>;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface MonitorScansTable {
  id: string;
  organization_id: string;
  monitor_id: string;
  /** created (the backfill of a new monitor) or requested (POST .../scan/). */
  reason: string;
  /** queued, running or completed. */
  status: string;
  /** JSON array: the monitor's terms when the scan started (null while queued). */
  terms: string | null;
  /** JSON: where the scan goes on from (null: from the start). */
  cursor: string | null;
  records_scanned: Generated<number | string>;
  alerts_raised: Generated<number | string>;
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** The outbox: one row per domain event, written in the transaction of its change. */
export interface EventsTable {
  id: string;
  organization_id: string;
  type: string;
  /** JSON: the resource as the API shows it. */
  data: string;
  created_at: string;
}

export interface TrackingTokensTable {
  id: string;
  organization_id: string;
  name: string;
  memo: string;
  /** web_bug, redirect, credential or api_key. */
  kind: string;
  /** active or disabled. */
  status: string;
  /** The key of /t/<key>/ (web_bug, redirect). */
  trigger_key: string | null;
  redirect_url: string | null;
  username: string | null;
  username_lower: string | null;
  password: string | null;
  /** SHA-1 of the password, upper-case hex as the leak corpus keeps it. */
  password_sha1: string | null;
  api_key: string | null;
  api_key_sha1: string | null;
  /** JSON array of addresses and CIDR ranges, normalised. */
  ignore_ips: string;
  exposure_count: Generated<number | string>;
  last_exposed_at: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface TrackingTokenExposuresTable {
  id: string;
  organization_id: string;
  token_id: string;
  /** http, login, api_key or leak. */
  channel: string;
  occurred_at: string;
  source_ip: string | null;
  user_agent: string | null;
  referer: string | null;
  method: string | null;
  path: string | null;
  leak_record_id: string | null;
  leak_source_id: string | null;
  leak_source_name: string | null;
}

export interface WebhooksTable {
  id: string;
  organization_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  description: string;
  is_active: boolean | number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  failure_count: Generated<number>;
  last_delivery_at: string | null;
  created_by: string | null;
  version: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** One event to deliver to one webhook: the delivery queue. */
export interface WebhookMessagesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  /** The JSON body sent, {id, type, timestamp, data}. */
  body: string;
  /** pending, delivered or failed (attempts exhausted). */
  status: string;
  attempts: Generated<number>;
  next_attempt_at: string;
  lease_until: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  created_at: string;
}

export interface NotificationChannelsTable {
  id: string;
  organization_id: string;
  kind: string;
  name: string;
  target: string;
  events: string;
  min_severity: string | null;
  monitors: string;
  tracking_tokens: string;
  personal_data: boolean | number;
  per_minute: number;
  is_active: boolean | number;
  window_start: string | null;
  window_count: Generated<number>;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  consecutive_failures: Generated<number>;
  version: Generated<number>;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface NotificationMessagesTable {
  id: string;
  channel_id: string;
  event_type: string;
  event_id: string | null;
  data: string | null;
  window_start: string;
  status: string;
  attempts: Generated<number>;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}
