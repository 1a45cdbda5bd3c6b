import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ClientRequest } from '../domain/client-request.js';
import type { NormalisedRecord } from '../domain/leak-record.js';
import { Hooks } from '../runtime/hooks.js';

/**
 * Every seam between the modules, with the signature of its handlers: who publishes each hook, and
 * what a handler does. Monitoring, tracking tokens, webhooks, notifications and TAXII take part through these, subscribing
 * in their own index.ts, never through app.ts or http/.
 */

/** A leak record as stored by one ingest batch (its content key is not read back: no hook needs it). */
export type InsertedRecord = Omit<NormalisedRecord, 'fingerprint' | 'key'> & { id: string; source_id: string };

/**
 * Called inside each ingestion batch's transaction with the records it newly stored: the monitoring
 * matcher and the tracking-token scanner plug in here, so a match is raised exactly once, with its record.
 */
export type IngestHook = (trx: Kysely<DB>, records: IngestedRecords, source: { id: string; name: string }) => Promise<{ alerts: number; exposures: number }>;

/**
 * The records an ingest batch newly stored, as its hooks take them: how many, and the records
 * themselves, asked for only when a hook has something to match them against (a batch written
 * from COPY bytes reads them back from the database, once however many hooks ask).
 */
export interface IngestedRecords {
  readonly count: number;
  load(): Promise<InsertedRecord[]>;
}

/**
 * Called in the transaction that renames a leak source: the monitoring module rewrites the record
 * JSON its alerts keep (the source's name is part of it), so that no alert shows the old name.
 */
export type SourceRenamedHook = (trx: Kysely<DB>, source: { id: string; name: string }) => Promise<void>;

/** Per-organization figures shown in /leaks/stats/ that belong to the monitoring module. */
export type OrgLeakFigures = (db: Kysely<DB>, orgId: string) => Promise<{ monitors: number; alerts_open: number; alerts_last_30_days: number }>;

/** The figures of GET /organization/usage/ that modules own. */
export type UsageKey = 'monitors' | 'tracking_tokens' | 'incidents_open';

/** A usage figure: the handler that owns `key` answers it, the others answer undefined. */
export type UsageFigure = (db: Kysely<DB>, orgId: string, key: UsageKey) => Promise<number | undefined>;

/**
 * Answers whether a password appears in the leak corpus. It runs on `db`, the caller's transaction
 * when there is one (SQLite has a single connection: a query outside the open transaction would
 * wait for it forever).
 */
export type BreachCheck = (password: string, db: Kysely<DB>) => Promise<boolean>;

/** Called on every login attempt, before the answer: the tracking-token module records credential canaries here. */
export type LoginAttemptHook = (username: string, client: ClientRequest) => Promise<void>;

/** Called with a bearer value that is not a valid token: the tracking-token module records api_key canaries here. */
export type UnknownBearerHook = (token: string, client: ClientRequest) => Promise<void>;

/** A domain event as the outbox stored it (data as JSON text). */
export interface RecordedEvent {
  id: string;
  organization_id: string;
  type: string;
  data: string;
  created_at: string;
}

/**
 * Called in the transaction that records events, so that what follows from them commits with the
 * change: webhooks queue their deliveries, notifications their messages, TAXII its STIX versions.
 */
export type EventsRecordedHook = (trx: Kysely<DB>, events: RecordedEvent[]) => Promise<void>;

/** What intelligence feeds say of one IOC value: each indicator naming it, with the feeds that gave it. */
export interface IocIntel {
  indicator: string;
  feeds: Array<{ id: string; name: string }>;
  confidence: number | null;
  tlp: string | null;
  revoked: boolean;
  false_positive: boolean;
}

/** The indicators of the organization naming each of these IOCs, by `type + "\u0000" + value`. */
export type IocIntelHook = (db: Kysely<DB>, orgId: string, iocs: ReadonlyArray<{ type: string; value: string }>) => Promise<Map<string, IocIntel[]>>;

/** What was seen with an exposure or in a leak record, matched against indicators: each part optional. */
export interface Observed {
  ip?: string | null;
  url?: string | null;
  user_agent?: string | null;
}

/** An indicator naming what was seen: which part (`field`), and what the indicator says. */
export interface IndicatorMatch {
  indicator: string;
  type: string;
  value: string;
  field: 'ip' | 'url' | 'host' | 'user_agent';
  feeds: Array<{ id: string; name: string }>;
  confidence: number | null;
  tlp: string | null;
}

/**
 * The live indicators (not revoked, not a false positive, still valid) of the organization naming
 * each of these observations, in their order.
 */
export type IndicatorMatchHook = (db: Kysely<DB>, orgId: string, observed: readonly Observed[]) => Promise<IndicatorMatch[][]>;

export interface AppHooks {
  /** Published by events: domain events recorded in the outbox, in their change's transaction. */
  'events.recorded': EventsRecordedHook;
  /** Published by leaks: each batch of records stored, in its transaction. */
  'leaks.ingested': IngestHook;
  /** Published by leaks: a source renamed, in its transaction. */
  'leaks.sourceRenamed': SourceRenamedHook;
  /** Published by leaks: the organization's figures in GET /leaks/stats/ (the first handler answers; zeros without one). */
  'leaks.organizationFigures': OrgLeakFigures;
  /** Published by organizations: one figure of GET /organization/usage/ (0 when no handler owns it). */
  'organizations.usage': UsageFigure;
  /** Published by auth: whether a new password appears in a known breach (any handler saying so refuses it). */
  'auth.breachCheck': BreachCheck;
  /** Published by auth: every login attempt, before it is answered. */
  'auth.loginAttempt': LoginAttemptHook;
  /** Published by auth: a bearer value that is not a valid token, before the 401. */
  'auth.unknownBearer': UnknownBearerHook;
  /** Published by incidents: what feeds say of an incident's IOCs, read with them (the first handler answers). */
  'incidents.intel': IocIntelHook;
  /** Published by tracking tokens, leaks and monitoring: the organization's indicators naming what was seen (the first handler answers; none without one). */
  'indicators.match': IndicatorMatchHook;
}

export type AppHookRegistry = Hooks<AppHooks>;

export const createHooks = (): AppHookRegistry => new Hooks<AppHooks>();
