import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { EVENT_TYPES } from '../events/index.js';
import { SEVERITIES } from '../incidents/index.js';

export const CHANNEL_KINDS = ['email', 'slack', 'teams', 'mattermost', 'discord'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];
export const CHANNEL_STATUSES = ['healthy', 'failing', 'disabled'] as const;
export const DEFAULT_PER_MINUTE = 10;

const Kind = Type.Enum([...CHANNEL_KINDS], { type: 'string', description: 'email (multipart text and HTML), slack (Block Kit), teams (an Adaptive Card, as Workflows incoming webhooks take it), mattermost (Slack-compatible attachments) or discord (embeds).' });
const Events = Type.Array(Type.Enum([...EVENT_TYPES], { type: 'string' }), { minItems: 1, uniqueItems: true, description: `The events it takes (the webhook event names): ${EVENT_TYPES.join(', ')}.` });
const Target = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "email: 1 to 20 addresses, comma-separated. The others: the service's incoming-webhook URL (https, or http; a private or loopback host only with THREATMON_WEBHOOK_ALLOW_PRIVATE), a secret: answered whole only by the create, masked after (scheme, host and its last 4 characters).",
});
const Ids = (what: string) => Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100, uniqueItems: true, description: `Only events of these ${what} (empty: all), at most 100.` });
const MinSeverity = Nullable(Type.Enum([...SEVERITIES], { type: 'string' }), 'Only alerts and incidents of at least this severity (other events pass), or null for all.');
const PerMinute = Type.Integer({ minimum: 1, maximum: 1000, description: `Messages a minute; the minute's later events go into one digest sent at its end (default ${DEFAULT_PER_MINUTE}).` });

export const ChannelSchema = Type.Object(
  {
    id: Uuid('Channel id.'),
    kind: Kind,
    name: Type.String({ description: 'Name.' }),
    target: Type.String({ description: 'Addresses (email), or the incoming-webhook URL masked (the create answers it whole).' }),
    events: Type.Array(Type.String(), { description: 'The events it takes.' }),
    min_severity: MinSeverity,
    monitors: Type.Array(Type.String(), { description: 'Only alerts of these monitors (empty: all).' }),
    tracking_tokens: Type.Array(Type.String(), { description: 'Only exposures of these tracking tokens (empty: all).' }),
    personal_data: Type.Boolean({ description: 'Whether messages may carry personal data (the term found, e-mail addresses, usernames, password masks, IP addresses, user agents). Default false: they name the monitor, the kind of term found, the source and the severity.' }),
    per_minute: PerMinute,
    is_active: Type.Boolean({ description: 'Sends (an owner or admin disables it; threatmon never does).' }),
    status: Type.Enum([...CHANNEL_STATUSES], { type: 'string', description: 'disabled (is_active false), failing (its last attempt failed: retried for 24 h) or healthy.' }),
    last_success_at: Nullable(Timestamp('Last message accepted.'), 'When the target last accepted a message, or null.'),
    last_failure_at: Nullable(Timestamp('Last failure.'), 'When an attempt last failed, or null.'),
    last_error: Nullable(Type.String(), 'What the target (or the network) said at the last failure, or null.'),
    consecutive_failures: Type.Integer({ description: 'Failed attempts since the last success.' }),
    created_at: Timestamp('When it was created.'),
    updated_at: Timestamp('When it last changed.'),
  },
  { title: 'NotificationChannel' },
);
export type ChannelOut = Static<typeof ChannelSchema>;

export const ChannelCreateSchema = Type.Object(
  {
    kind: Kind,
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Name, 1-200 characters.' }),
    target: Target,
    events: Events,
    min_severity: Type.Optional(MinSeverity),
    monitors: Type.Optional(Ids('monitors')),
    tracking_tokens: Type.Optional(Ids('tracking tokens')),
    personal_data: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    per_minute: Type.Optional(PerMinute),
    is_active: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  },
  { additionalProperties: false },
);
export type ChannelCreate = Static<typeof ChannelCreateSchema>;

export const ChannelPatchSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    target: Type.Optional(Target),
    events: Type.Optional(Events),
    min_severity: Type.Optional(MinSeverity),
    monitors: Type.Optional(Ids('monitors')),
    tracking_tokens: Type.Optional(Ids('tracking tokens')),
    personal_data: Type.Optional(Type.Boolean()),
    per_minute: Type.Optional(PerMinute),
    is_active: Type.Optional(Type.Boolean({ description: 'true again starts the failure count over.' })),
  },
  { additionalProperties: false, description: 'kind is fixed once created.' },
);
export type ChannelPatch = Static<typeof ChannelPatchSchema>;

export const ChannelTestSchema = Type.Object(
  {
    delivered: Type.Boolean({ description: 'Whether the target accepted the sample.' }),
    status_code: Nullable(Type.Integer(), "The HTTP status the chat service answered, or the SMTP server's reply code; null when nothing answered."),
    response: Nullable(Type.String(), 'What it said (at most 1 KiB), or null.'),
    error: Nullable(Type.String(), 'Why it failed, or null.'),
    duration_ms: Type.Integer({ description: 'How long it took.' }),
  },
  { title: 'NotificationTestResult' },
);
export type ChannelTestResult = Static<typeof ChannelTestSchema>;
