import { type Static, Type } from 'typebox';
import { IOC_TYPES } from '../../domain/ioc.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';

import { type RecordSeverity, SEVERITIES } from '../../domain/leak-record.js';

export { SEVERITIES };
export type Severity = RecordSeverity;
export const SEVERITY_RANK: Record<Severity, number> = { low: 1, medium: 2, high: 3, critical: 4 };
export const STATUSES = ['open', 'investigating', 'contained', 'resolved', 'closed'] as const;
export type Status = (typeof STATUSES)[number];
export const TLPS = ['clear', 'green', 'amber', 'amber+strict', 'red'] as const;
export type Tlp = (typeof TLPS)[number];

export const SeveritySchema = Type.Enum([...SEVERITIES], { type: 'string', description: 'low, medium, high or critical.' });
export const StatusSchema = Type.Enum([...STATUSES], {
  type: 'string',
  description: 'open -> investigating -> contained -> resolved -> closed; any open state may go straight to resolved or closed; resolved/closed -> open reopens.',
});
export const TlpSchema = Type.Enum([...TLPS], { type: 'string', description: 'Traffic Light Protocol 2.0 marking.' });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, uniqueItems: true, description: 'Free labels (at most 50).' });
const Title = Type.String({ minLength: 1, maxLength: 200, description: 'Short title, 1-200 characters.' });
const Description = Type.String({ maxLength: 20000, description: 'Free text (Markdown welcome).' });

export const IocTypeSchema = Type.Enum([...IOC_TYPES], { type: 'string', description: 'Kind of indicator: decides how the value is validated and normalised.' });

export const IocSchema = Type.Object(
  {
    id: Uuid('IOC id.'),
    incident: Uuid('Incident it belongs to.'),
    type: IocTypeSchema,
    value: Type.String({ description: 'Normalised value: hashes and domains lower-case, IPv6 compressed, defanged input refanged.' }),
    description: Type.String({ description: 'Notes about the indicator.' }),
    tlp: TlpSchema,
    tags: Tags,
    first_seen: Nullable(Timestamp('First sighting.'), 'First sighting, or null.'),
    last_seen: Nullable(Timestamp('Last sighting.'), 'Last sighting, or null.'),
    expires_at: Nullable(Timestamp('When it stops being valid.'), "When it stops being valid (the STIX indicator's valid_until), or null for never."),
    created_by: Nullable(Uuid('Creator.'), 'User who added it, or null.'),
    created_at: Timestamp('When it was added.'),
    updated_at: Timestamp('When it last changed.'),
  },
  { title: 'IOC' },
);
export type IocOut = Static<typeof IocSchema>;

/** An IOC as its incident shows it: with what intelligence feeds say of the same value. */
export const IocReadSchema = Type.Object(
  {
    ...IocSchema.properties,
    feed_matches: Type.Array(
      Type.Object({
        indicator: Uuid('The indicator (GET /indicators/<id>/).'),
        feeds: Type.Array(Type.Object({ id: Uuid('Feed id.'), name: Type.String() }), { description: 'The feeds that gave it.' }),
        confidence: Type.Union([Type.Integer(), Type.Null()]),
        tlp: Type.Union([Type.String(), Type.Null()]),
        revoked: Type.Boolean({ description: 'Revoked by its feed.' }),
        false_positive: Type.Boolean({ description: 'Flagged false positive by your organization.' }),
      }),
      { description: 'Indicators from your feeds naming the same type and value (feed context), read at the moment.' },
    ),
  },
  { title: 'IOCRead' },
);

export const IocInputSchema = Type.Object(
  {
    type: IocTypeSchema,
    value: Type.String({ minLength: 1, maxLength: 4096, description: 'The indicator; defanged forms (hxxp, [.], [@]...) are accepted and refanged.' }),
    description: Type.Optional(Description),
    tlp: Type.Optional(TlpSchema),
    tags: Type.Optional(Tags),
    first_seen: Type.Optional(Nullable(Timestamp('First sighting.'))),
    last_seen: Type.Optional(Nullable(Timestamp('Last sighting.'))),
    expires_at: Type.Optional(Nullable(Timestamp('When it stops being valid: later than first_seen (or than now, without first_seen).'))),
  },
  { additionalProperties: false, title: 'IOCInput', description: 'tlp defaults to the incident\'s.' },
);
export type IocInput = Static<typeof IocInputSchema>;

export const IocPatchSchema = Type.Object(
  {
    description: Type.Optional(Description),
    tlp: Type.Optional(TlpSchema),
    tags: Type.Optional(Tags),
    first_seen: Type.Optional(Nullable(Timestamp('First sighting.'))),
    last_seen: Type.Optional(Nullable(Timestamp('Last sighting.'))),
    expires_at: Type.Optional(Nullable(Timestamp('When it stops being valid: later than first_seen (or than now, without first_seen).'))),
  },
  { additionalProperties: false, description: 'type and value are fixed once created: delete and re-add to change them.' },
);

export const BulkResultSchema = Type.Object({
  created: Type.Integer({ description: 'IOCs added.' }),
  duplicates: Type.Integer({ description: 'Items already in the incident (same type and value), or repeated in the request.' }),
  rejected: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'Position in the request array.' }),
      errors: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    }),
    { description: 'Invalid items, with their errors; the valid ones are kept.' },
  ),
});

export const IncidentSchema = Type.Object(
  {
    id: Uuid('Incident id.'),
    title: Title,
    description: Description,
    status: StatusSchema,
    severity: SeveritySchema,
    tlp: TlpSchema,
    tags: Tags,
    assignee: Nullable(Uuid('Assigned user.'), 'Assigned user of the same organization, or null.'),
    source_alert: Nullable(Uuid('Alert it was escalated from.'), 'The monitoring alert it was escalated from, or null.'),
    ioc_count: Type.Integer({ description: 'Number of IOCs.' }),
    created_by: Nullable(Uuid('Creator.'), 'User who created it, or null.'),
    created_at: Timestamp('Creation time.'),
    updated_at: Timestamp('Last change.'),
    resolved_at: Nullable(Timestamp('When it was resolved.'), 'Set by the server on resolve; kept on close; cleared on reopen.'),
    closed_at: Nullable(Timestamp('When it was closed.'), 'Set by the server on close; cleared on reopen.'),
  },
  { title: 'Incident' },
);
export type IncidentOut = Static<typeof IncidentSchema>;

export const IncidentCreateSchema = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    status: Type.Optional(StatusSchema),
    severity: Type.Optional(SeveritySchema),
    tlp: Type.Optional(TlpSchema),
    tags: Type.Optional(Tags),
    assignee: Type.Optional(Nullable(Uuid('Assigned user.'))),
    iocs: Type.Optional(Type.Array(IocInputSchema, { maxItems: 1000, description: 'Initial IOCs (at most 1000); all must be valid.' })),
  },
  { additionalProperties: false, description: 'severity defaults to medium, tlp to amber, status to open.' },
);

/** The creatable fields but `iocs`, all optional. */
export const IncidentPatchSchema = Type.Partial(Type.Omit(IncidentCreateSchema, ['iocs']), { additionalProperties: false });

export const EVENT_KINDS = ['created', 'updated', 'ioc_added', 'ioc_removed', 'comment_added', 'alert_merged'] as const;

export const EventSchema = Type.Object(
  {
    id: Uuid('Event id.'),
    kind: Type.Enum([...EVENT_KINDS], { type: 'string', description: 'What happened.' }),
    actor: Nullable(Uuid('Who.'), 'User who did it, or null.'),
    changes: Type.Record(Type.String(), Type.Unknown(), { description: '`{field: {from, to}}` for updates; the values set for creations.' }),
    ioc: Nullable(Uuid('IOC.'), 'The IOC added or removed, or null.'),
    created_at: Timestamp('When.'),
  },
  { title: 'IncidentEvent' },
);

export const CommentSchema = Type.Object(
  {
    id: Uuid('Comment id.'),
    author: Nullable(Uuid('Author.'), 'Author, or null if since removed.'),
    body: Type.String({ description: 'Text, 1-10000 characters.' }),
    created_at: Timestamp('When.'),
  },
  { title: 'Comment' },
);

export const CommentCreateSchema = Type.Object(
  { body: Type.String({ minLength: 1, maxLength: 10000, description: 'Text, 1-10000 characters.' }) },
  { additionalProperties: false },
);

export const CorrelatedIocSchema = Type.Object(
  {
    ...IocSchema.properties,
    incident: Type.Object({ id: Uuid('Incident id.'), title: Type.String(), status: StatusSchema }, { description: 'The incident holding it.' }),
  },
  { title: 'CorrelatedIOC' },
);

export const StatsSchema = Type.Object({
  by_status: Type.Record(Type.String(), Type.Integer(), { description: 'Incidents per status (every status listed).' }),
  by_severity: Type.Record(Type.String(), Type.Integer(), { description: 'Incidents per severity (every severity listed).' }),
  open: Type.Integer({ description: 'Incidents neither resolved nor closed.' }),
  mean_time_to_resolve_seconds: Nullable(Type.Number(), 'Mean of resolved_at - created_at over resolved incidents; null when none.'),
});

// What this module's events carry (see EventPayloads in the events module).
declare module '../events/index.js' {
  interface EventPayloads {
    'incident.created': IncidentOut;
    'incident.updated': IncidentOut;
    'ioc.created': IocOut;
    'ioc.updated': IocOut;
    'ioc.deleted': IocOut;
  }
}
