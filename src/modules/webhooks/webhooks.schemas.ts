import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { EVENT_TYPES } from '../events/index.js';

const Events = Type.Array(Type.Enum([...EVENT_TYPES], { type: 'string' }), {
  minItems: 1,
  uniqueItems: true,
  description: `The events to receive: ${EVENT_TYPES.join(', ')}. An unknown one is 400.`,
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'https (or http) URL. Its host must be, and resolve only to, public addresses: loopback, private, link-local, CGNAT, unique-local, multicast and unspecified ones (IPv4-mapped forms included) are refused (400 naming url) unless THREATMON_WEBHOOK_ALLOW_PRIVATE=true, and again at every delivery.',
});

export const WebhookSchema = Type.Object(
  {
    id: Uuid('Webhook id.'),
    url: Type.String({ description: 'Where events are POSTed.' }),
    events: Type.Array(Type.String(), { description: 'The events it receives.' }),
    description: Type.String({ description: 'Free text.' }),
    is_active: Type.Boolean({ description: 'Receives events. Set false after 50 consecutive failed deliveries; setting it true again resets failure_count.' }),
    secret: Type.Optional(Type.String({ description: 'Only in the answer that creates it (or rotates it): `whsec_` + base64 of 24 random bytes. Never shown again.' })),
    failure_count: Type.Integer({ description: 'Consecutive failed deliveries (test pings aside).' }),
    last_delivery_at: Nullable(Timestamp('Last successful delivery.'), 'When an event was last delivered, or null.'),
    created_at: Timestamp('When it was created.'),
  },
  { title: 'Webhook' },
);
export type WebhookOut = Static<typeof WebhookSchema>;

export const WebhookCreateSchema = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Type.String({ maxLength: 5000, description: 'Free text.' })),
    is_active: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  },
  { additionalProperties: false },
);
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

export const WebhookPatchSchema = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Type.String({ maxLength: 5000, description: 'Free text.' })),
    is_active: Type.Optional(Type.Boolean({ description: 'Setting it true resets failure_count.' })),
  },
  { additionalProperties: false },
);
export type WebhookPatch = Static<typeof WebhookPatchSchema>;

export const DeliverySchema = Type.Object(
  {
    id: Uuid('Attempt id.'),
    event_id: Uuid('The event (the webhook-id header and the body id).'),
    event_type: Type.String({ description: 'The event type, or ping for a test.' }),
    attempt: Type.Integer({ description: 'Which attempt at this event, from 1 (at most 8).' }),
    status_code: Nullable(Type.Integer({ description: 'HTTP status.' }), 'The HTTP status answered, or null (no answer: timeout, refused, network error).'),
    duration_ms: Type.Integer({ description: 'How long it took.' }),
    error: Nullable(Type.String({ description: 'What went wrong.' }), 'What went wrong without an HTTP status, or null.'),
    created_at: Timestamp('When.'),
  },
  { title: 'WebhookDelivery' },
);

export const TestResultSchema = Type.Object(
  {
    delivered: Type.Boolean({ description: 'Answered 2xx.' }),
    status_code: Nullable(Type.Integer({ description: 'HTTP status.' }), 'The HTTP status, or null.'),
    duration_ms: Type.Integer({ description: 'How long it took.' }),
  },
  { title: 'WebhookTestResult' },
);
