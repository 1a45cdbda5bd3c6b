import { type Static, Type } from 'typebox';
import { MAX_TERMS, MONITOR_TYPES } from '../../domain/monitor-terms.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { SEVERITIES } from '../incidents/index.js';
import { LeakRecordSchema } from '../leaks/index.js';

export const MONITOR_STATUSES = ['active', 'paused'] as const;
// One severity scale with incidents: an escalated alert's severity becomes its incident's.
export { SEVERITIES };

const MonitorType = Type.Enum([...MONITOR_TYPES], { type: 'string', description: 'What the terms are: domain, email, username, keyword or ip.' });
const Status = Type.Enum([...MONITOR_STATUSES], { type: 'string', description: 'active (matched against every ingested record) or paused.' });
const Severity = Type.Enum([...SEVERITIES], { type: 'string', description: 'low, medium, high or critical.' });
const MonitorSeverity = Nullable(
  Severity,
  'The severity of its alerts, or null (the default): each alert then takes the severity of what it found, its record\'s, except that a stealer-log credential is critical only for a URL of the organization\'s own domain (one of the monitor\'s domains, or its e-mails\' domains) and high otherwise.',
);
const Terms = Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
  minItems: 1,
  maxItems: MAX_TERMS,
  description:
    'What to watch for, 1-500 terms, each validated and normalised for the type (a bad one is 400 naming terms.<index>): domain, two labels at least and never a bare public suffix such as com, co.uk or github.io (matches the domain and its subdomains, in records\' domains and e-mail domains); email (exact); username (ignoring case); keyword, 3 characters at least (ignoring case, in any text field); ip, an address or a CIDR range. Duplicates after normalising are dropped.',
});

export const MonitorSchema = Type.Object(
  {
    id: Uuid('Monitor id.'),
    name: Type.String({ description: 'Name, 1-200 characters.' }),
    description: Type.String({ description: 'Free text.' }),
    type: MonitorType,
    terms: Type.Array(Type.String(), { description: 'The terms, normalised.' }),
    status: Status,
    severity: MonitorSeverity,
    alert_count: Type.Integer({ description: 'Alerts it has raised.' }),
    alerts_open: Type.Integer({ description: 'Of those, the ones new or acknowledged.' }),
    last_match_at: Nullable(Timestamp('When its last alert was raised.'), 'When its last alert was raised, or null.'),
    last_scan_at: Nullable(Timestamp('When its last scan of the corpus finished.'), 'When its last scan of the corpus finished, or null.'),
    created_by: Nullable(Uuid('Creator.'), 'Who created it (null once that user is gone).'),
    created_at: Timestamp('When it was created.'),
    updated_at: Timestamp('When it last changed.'),
  },
  { title: 'Monitor' },
);
export type MonitorOut = Static<typeof MonitorSchema>;

export const MonitorCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Name, 1-200 characters.' }),
    description: Type.Optional(Type.String({ maxLength: 5000, description: 'Free text.' })),
    type: MonitorType,
    terms: Terms,
    status: Type.Optional(Status),
    severity: Type.Optional(MonitorSeverity),
    backfill: Type.Optional(
      Type.Boolean({ default: true, description: 'Scan the existing corpus for the terms in the background (default true; only for an active monitor). Follow it at GET /monitoring/<id>/scans/.' }),
    ),
  },
  { additionalProperties: false },
);
export type MonitorCreate = Static<typeof MonitorCreateSchema>;

export const MonitorPatchSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Name, 1-200 characters.' })),
    description: Type.Optional(Type.String({ maxLength: 5000, description: 'Free text.' })),
    terms: Type.Optional(Terms),
    status: Type.Optional(Status),
    severity: Type.Optional(MonitorSeverity),
  },
  { additionalProperties: false },
);
export type MonitorPatch = Static<typeof MonitorPatchSchema>;

export const ALERT_STATUSES = ['new', 'acknowledged', 'resolved', 'false_positive'] as const;
const AlertStatus = Type.Enum([...ALERT_STATUSES], { type: 'string', description: 'new, acknowledged, resolved or false_positive; new and acknowledged are open.' });

export const AlertSchema = Type.Object(
  {
    id: Uuid('Alert id.'),
    monitor: Type.Object({ id: Uuid('Monitor id.'), name: Type.String({ description: 'Monitor name.' }) }, { description: 'The monitor that raised it.' }),
    severity: Type.Enum([...SEVERITIES], { type: 'string', description: 'low, medium, high or critical: its monitor\'s severity, or when the monitor has none, derived from what it found (see the monitor\'s severity).' }),
    status: AlertStatus,
    matched_term: Type.String({ description: 'The term found.' }),
    matched_field: Type.String({ description: 'Where: email, username, domain, ip, phone, full_name or extra.<key>.' }),
    leak_record: LeakRecordSchema,
    incident: Nullable(Uuid('Incident it was escalated to.'), 'The incident it was escalated to, or null.'),
    note: Type.String({ description: 'Triage note.' }),
    created_at: Timestamp('When it was raised.'),
    updated_at: Timestamp('When it last changed.'),
  },
  { title: 'Alert' },
);
export type AlertOut = Static<typeof AlertSchema>;

export const AlertPatchSchema = Type.Object(
  {
    status: Type.Optional(AlertStatus),
    note: Type.Optional(Type.String({ maxLength: 10000, description: 'Triage note.' })),
  },
  { additionalProperties: false },
);
export type AlertPatch = Static<typeof AlertPatchSchema>;

export const AlertBulkSchema = Type.Object(
  {
    ids: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 1000, description: 'The alerts, at most 1,000.' }),
    status: AlertStatus,
    note: Type.Optional(Type.String({ maxLength: 10000, description: 'Triage note for each.' })),
  },
  { additionalProperties: false },
);

export const AlertBulkResultSchema = Type.Object({
  updated: Type.Integer({ description: 'Alerts changed.' }),
  not_found: Type.Array(Type.String(), { description: 'Ids that name no alert of your organization.' }),
});

const Counts = (keys: readonly string[], what: string) =>
  Type.Object(Object.fromEntries(keys.map((k) => [k, Type.Integer({ description: `${what} ${k}.` })])), { description: `${what}, by value (zeros included).` });

export const MonitoringStatsSchema = Type.Object({
  monitors: Counts(MONITOR_STATUSES, 'Monitors'),
  alerts: Type.Object({ by_status: Counts(ALERT_STATUSES, 'Alerts'), by_severity: Counts(SEVERITIES, 'Alerts') }, { description: 'Every alert of the organization.' }),
  alerts_by_day: Type.Array(Type.Object({ date: Type.String({ format: 'date', description: 'A day (UTC).' }), count: Type.Integer({ description: 'Alerts raised that day.' }) }), {
    description: 'The last 30 days (UTC), oldest first, today included, days without alerts as 0.',
  }),
});

export const SCAN_STATUSES = ['queued', 'running', 'completed'] as const;

export const ScanSchema = Type.Object(
  {
    id: Uuid('Scan id.'),
    monitor: Uuid('The monitor scanned.'),
    reason: Type.Enum(['created', 'requested'], { type: 'string', description: 'created: the backfill of a new monitor; requested: POST /monitoring/<id>/scan/.' }),
    status: Type.Enum([...SCAN_STATUSES], {
      type: 'string',
      description: 'queued (waiting; at most one per monitor), running (at most one per monitor; after a restart it goes on from its last chunk) or completed.',
    }),
    records_scanned: Type.Integer({ description: 'Leak records read so far: for domain, email, username and ip monitors those the corpus indexes found for the terms, for keywords every record.' }),
    alerts_raised: Type.Integer({ description: 'New alerts it raised (a record already alerted on for a term raises none).' }),
    created_at: Timestamp('When it was requested.'),
    started_at: Nullable(Timestamp('When it started.'), 'When it started, or null while queued.'),
    finished_at: Nullable(Timestamp('When it finished.'), 'When it finished, or null.'),
  },
  { title: 'MonitorScan' },
);
export type ScanOut = Static<typeof ScanSchema>;

export const ScanQueuedSchema = Type.Object(
  {
    scan_id: Uuid('The scan: GET /monitoring/<id>/scans/<scan_id>/ follows it.'),
    status: Type.Enum(['queued'], { type: 'string', description: 'Always queued. When a scan of this monitor was already waiting, that scan is the one answered: it reads the corpus as it is when it starts.' }),
  },
  { title: 'MonitorScanQueued' },
);

// What this module's events carry (see EventPayloads in the events module).
declare module '../events/index.js' {
  interface EventPayloads {
    'alert.created': AlertOut;
    'alert.updated': AlertOut;
    'monitor.scan_completed': ScanOut;
  }
}
