import { type Static, Type } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';
import { USERNAME_PATTERN } from '../identity/index.js';
import { IndicatorMatchSchema } from '../indicator-match.schema.js';

export const TOKEN_KINDS = ['web_bug', 'redirect', 'credential', 'api_key'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];
export const TOKEN_STATUSES = ['active', 'disabled'] as const;
export const CHANNELS = ['http', 'login', 'api_key', 'leak'] as const;
export const MAX_IGNORE_IPS = 100;

const Kind = Type.Enum([...TOKEN_KINDS], {
  type: 'string',
  description: 'web_bug (a URL answering a 1x1 GIF), redirect (a URL answering 302 to redirect_url), credential (a fake login) or api_key (a fake bearer key of this API).',
});
const Status = Type.Enum([...TOKEN_STATUSES], { type: 'string', description: 'active (records exposures) or disabled (records nothing; a disabled redirect still redirects).' });
const IgnoreIps = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: MAX_IGNORE_IPS,
  description: 'Addresses or CIDR ranges whose hits are not recorded (your scanners, your own network), at most 100, normalised (IPv4-mapped IPv6 as IPv4); a bad one is 400 naming ignore_ips.<index>.',
});
const Name = Type.String({ minLength: 1, maxLength: 200, description: 'Name, 1-200 characters.' });
const Memo = Type.String({ maxLength: 5000, description: 'Where it is planted, what it means if it fires.' });

export const TrackingTokenSchema = Type.Object(
  {
    id: Uuid('Token id.'),
    name: Type.String({ description: 'Name.' }),
    memo: Type.String({ description: 'Memo.' }),
    kind: Kind,
    status: Status,
    ignore_ips: Type.Array(Type.String(), { description: 'Addresses and ranges whose hits are not recorded.' }),
    exposure_count: Type.Integer({ description: 'Exposures recorded.' }),
    last_exposed_at: Nullable(Timestamp('The last exposure.'), 'When the last exposure was recorded, or null.'),
    trigger_url: Type.Optional(Type.String({ description: 'web_bug and redirect: the URL to plant (`/t/<key>/`, any path below it counts too).' })),
    redirect_url: Type.Optional(Type.String({ description: 'redirect: where the trigger sends its visitor.' })),
    username: Type.Optional(Type.String({ description: 'credential: the fake login name. Any POST /auth/token/ with it is an exposure.' })),
    password: Type.Optional(Type.String({ description: 'credential: the fake password (a canary, never a real one).' })),
    api_key: Type.Optional(Type.String({ description: 'api_key: the fake key. Presented as a Bearer token to this API, it is an exposure.' })),
    created_by: Nullable(Uuid('Creator.'), 'Who created it (null once that user is gone).'),
    created_at: Timestamp('When it was created.'),
    updated_at: Timestamp('When it last changed.'),
  },
  { title: 'TrackingToken', description: 'A canary. Its material (trigger_url, redirect_url, username and password, api_key), per kind, is shown on every read.' },
);
export type TokenOut = Static<typeof TrackingTokenSchema>;

export const TokenCreateSchema = Type.Object(
  {
    name: Name,
    memo: Type.Optional(Memo),
    kind: Kind,
    status: Type.Optional(Status),
    redirect_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'redirect only, and required there: an http or https URL.' })),
    username: Type.Optional(
      Type.String({ minLength: 3, maxLength: 150, pattern: USERNAME_PATTERN, description: 'credential only: the fake login name (letters, digits and @.+-_), unused by any account or token. Made up when not given.' }),
    ),
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 128, description: 'credential only: the fake password. Made up when not given.' })),
    ignore_ips: Type.Optional(IgnoreIps),
  },
  { additionalProperties: false },
);
export type TokenCreate = Static<typeof TokenCreateSchema>;

export const TokenPatchSchema = Type.Object(
  { name: Type.Optional(Name), memo: Type.Optional(Memo), status: Type.Optional(Status), ignore_ips: Type.Optional(IgnoreIps) },
  { additionalProperties: false },
);
export type TokenPatch = Static<typeof TokenPatchSchema>;

export const ExposureSchema = Type.Object(
  {
    id: Uuid('Exposure id.'),
    token: Uuid('The token exposed.'),
    channel: Type.Enum([...CHANNELS], { type: 'string', description: 'http (its trigger URL), login (its credential at POST /auth/token/), api_key (its key as a Bearer token) or leak (found in ingested leak data).' }),
    occurred_at: Timestamp('When.'),
    source_ip: Nullable(Type.String({ description: 'Client address.' }), 'The client address, canonical (IPv4-mapped IPv6 shown as IPv4; X-Forwarded-For only with THREATMON_TRUST_PROXY); null for leak.'),
    user_agent: Nullable(Type.String({ description: 'User-Agent.' }), 'User-Agent (at most 1 KiB), or null.'),
    referer: Nullable(Type.String({ description: 'Referer.' }), 'Referer (at most 1 KiB), or null.'),
    method: Nullable(Type.String({ description: 'HTTP method.' }), 'HTTP method, or null for leak.'),
    path: Nullable(Type.String({ description: 'Path.' }), 'Path and query requested (at most 1 KiB), or null for leak.'),
    leak_record: Nullable(Uuid('Leak record.'), 'leak: the record it was found in, else null.'),
    leak_source: Nullable(Type.Object({ id: Uuid('Source id.'), name: Type.String({ description: 'Source name.' }) }), 'leak: the record\'s source, else null.'),
    severity: Type.Enum(['high', 'critical'], { type: 'string', description: 'high; critical when an indicator named it (one step up): a hit from a known-bad address is worse.' }),
    indicator_matches: Type.Array(IndicatorMatchSchema, { description: 'The organization\'s live indicators (feeds, section 7b) that named its address, its Referer (as a URL, and its host) or its User-Agent when it happened. Events leave out TLP:RED ones.' }),
  },
  { title: 'Exposure' },
);
export type ExposureOut = Static<typeof ExposureSchema>;

// What this module's events carry (see EventPayloads in the events module).
declare module '../events/index.js' {
  interface EventPayloads {
    'tracking_token.exposed': ExposureOut;
  }
}
