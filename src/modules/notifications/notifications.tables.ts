import type { Generated } from 'kysely';

/** The tables of the notifications module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

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

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    notification_channels: NotificationChannelsTable;
    notification_messages: NotificationMessagesTable;
  }
}
