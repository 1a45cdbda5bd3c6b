import type { Generated } from 'kysely';

/** The tables of the webhooks module, as stored (timestamps ISO strings; booleans 0/1 on SQLite). */

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

// Its tables in the database type (db/schema.ts): each module adds its own.
declare module '../../db/schema.js' {
  interface DB {
    webhooks: WebhooksTable;
    webhook_messages: WebhookMessagesTable;
    webhook_attempts: WebhookAttemptsTable;
  }
}
