import { type Static, Type } from 'typebox';
import { IOC_TYPES } from '../../domain/ioc.js';
import { IndicatorMatchSchema, type IndicatorMatchOut, TLPS } from '../indicator-match.schema.js';

export { type IndicatorMatchOut, TLPS };

export const FEED_KINDS = ['taxii2', 'stix', 'misp', 'csv', 'hibp'] as const;
export const MISP_FORMATS = ['misp', 'csv', 'freetext'] as const;
export const INDICATOR_TYPES = ['ipv4', 'ipv6', 'cidr', 'domain', 'url', 'email', 'md5', 'sha1', 'sha256', 'sha512', 'user-agent', 'stix-pattern'] as const;
export const DEFAULT_INTERVAL = 3600;

const Auth = Type.Union(
  [
    Type.Object({ type: Type.Literal('basic'), username: Type.String({ minLength: 1, maxLength: 200 }), password: Type.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false, title: 'FeedAuthBasic' }),
    Type.Object({ type: Type.Literal('bearer'), token: Type.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false, title: 'FeedAuthBearer' }),
    Type.Object({ type: Type.Literal('header'), name: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+$' }), value: Type.String({ minLength: 1, maxLength: 4000 }) }, { additionalProperties: false, title: 'FeedAuthHeader' }),
  ],
  { description: 'How to authenticate to the feed: HTTP Basic, a bearer token, or a named header (an API key). Shown whole in the create answer only; reads and the audit log mask it.' },
);
export type FeedAuth = Static<typeof Auth>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Name, 1-200 characters.' }),
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL of the bundle or list (a stix feed may have none: its bundles are uploaded). Its host must be, and resolve only to, public addresses (as a webhook\'s), unless THREATMON_WEBHOOK_ALLOW_PRIVATE=true.' }),
  column: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Integer({ minimum: 1, maximum: 1000 })], { description: 'csv (and misp in its csv format) only: the column holding the value, a header name or a number from 1; without it every line is one value.' }),
  type: Type.Enum(IOC_TYPES.filter((t) => (INDICATOR_TYPES as readonly string[]).includes(t)), { type: 'string', description: 'csv (and misp in its csv format) only: the type of every value; without it each value\'s type is told from its shape.' }),
  format: Type.Enum(MISP_FORMATS, { type: 'string', description: 'misp only: `misp` (default), a MISP feed directory (manifest.json and one JSON per event), pulled by the manifest\'s timestamps; `csv`, MISP\'s CSV feed format (as a csv feed, with column and type); `freetext`, MISP\'s freetext format (indicators found in any text).' }),
  collections: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50, uniqueItems: true, description: 'taxii2 only: the collections to pull, by id or title; empty or absent: every collection the server lets it read.' }),
  auth: Type.Union([Auth, Type.Null()]),
  interval_seconds: Type.Integer({ minimum: 60, maximum: 7 * 24 * 3600, description: 'Seconds between pulls (60 s to 7 days; default 3600).' }),
  is_active: Type.Boolean({ description: 'false: never pulled until true again.' }),
};

export const FeedCreateSchema = Type.Object(
  {
    name: fields.name,
    kind: Type.Enum(FEED_KINDS, { type: 'string', description: '`taxii2`: a TAXII 2.1 server (its discovery URL or an API root) and its collections; `stix`: a STIX 2.1 bundle at the URL; `misp`: a MISP feed (see format); `csv`: an indicator list (one value per line, or CSV with `column`), as abuse.ch publishes them; `hibp`: an upstream Have I Been Pwned v3 API (its base URL, the key as `auth` {type: header, name: hibp-api-key}): the breached accounts of the organization\'s own domains (those its domain monitors watch) into the leak corpus.' }),
    url: Type.Optional(fields.url),
    collections: Type.Optional(fields.collections),
    column: Type.Optional(fields.column),
    type: Type.Optional(fields.type),
    format: Type.Optional(fields.format),
    auth: Type.Optional(fields.auth),
    interval_seconds: Type.Optional(fields.interval_seconds),
    is_active: Type.Optional(fields.is_active),
  },
  { additionalProperties: false },
);
export type FeedCreate = Static<typeof FeedCreateSchema>;

export const FeedPatchSchema = Type.Object(
  { name: Type.Optional(fields.name), url: Type.Optional(fields.url), collections: Type.Optional(fields.collections), column: Type.Optional(Type.Union([fields.column, Type.Null()])), type: Type.Optional(Type.Union([fields.type, Type.Null()])), format: Type.Optional(fields.format), auth: Type.Optional(fields.auth), interval_seconds: Type.Optional(fields.interval_seconds), is_active: Type.Optional(fields.is_active) },
  { additionalProperties: false },
);
export type FeedPatch = Static<typeof FeedPatchSchema>;

const at = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const FeedSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  kind: Type.Enum(FEED_KINDS, { type: 'string' }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'The URL (its user and password parts, if any, masked); null: a stix feed given its bundles by upload only.' }),
  collections: Type.Array(Type.String(), { description: 'taxii2: the collections it pulls, by id or title (empty: every readable one).' }),
  column: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
  type: Type.Union([Type.String(), Type.Null()]),
  format: Type.Union([Type.Enum(MISP_FORMATS, { type: 'string' }), Type.Null()], { description: 'misp: its format; null for other kinds.' }),
  auth: Type.Union([Type.Object({}, { additionalProperties: true, description: 'In the create answer: as given. In reads: `{type}` and a basic username; secrets as "****".' }), Type.Null()]),
  interval_seconds: Type.Integer(),
  is_active: Type.Boolean(),
  status: Type.Enum(['never_pulled', 'healthy', 'failing'], { type: 'string', description: 'never_pulled, healthy (its last pull succeeded) or failing (its last pull did not: last_error says why).' }),
  last_pull_at: at('When it was last pulled.'),
  last_success_at: at('When a pull last succeeded.'),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last pull failed (a limit hit, an HTTP status, not a bundle...).' }),
  next_pull_at: Type.String({ format: 'date-time', description: 'When it is pulled next (failures back off: 1, 2, 4... minutes, at most its interval).' }),
  objects_read: Type.Integer({ description: 'Objects (or list entries) read by every pull.' }),
  indicators_added: Type.Integer(),
  indicators_updated: Type.Integer(),
  indicators_retired: Type.Integer({ description: 'Indicators it revoked.' }),
  rejected: Type.Integer({ description: 'Objects or entries that could not be read as indicators.' }),
  reject_examples: Type.Array(Type.String(), { description: 'The first rejects of the last pull that had any, with why.' }),
  records_added: Type.Integer({ description: 'hibp: records it added to the leak corpus (an account already there is not added again); 0 for other kinds.' }),
  created_by: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type FeedOut = Static<typeof FeedSchema>;

export const IndicatorSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  type: Type.Enum(INDICATOR_TYPES, { type: 'string', description: 'The value\'s type; `user-agent`: a STIX pattern on the HTTP request extension\'s User-Agent header; `stix-pattern`: a pattern of more than one comparison, kept whole.' }),
  value: Type.String({ description: 'Normalised as an IOC of its type is (lower-case hashes and domains, canonical addresses).' }),
  name: Type.Union([Type.String(), Type.Null()]),
  stix_id: Type.Union([Type.String(), Type.Null()]),
  confidence: Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()]),
  tlp: Type.Union([Type.Enum(TLPS, { type: 'string' }), Type.Null()]),
  labels: Type.Array(Type.String()),
  valid_until: at('When it stops being valid (STIX valid_until).'),
  revoked: Type.Boolean({ description: 'Revoked by its feed (a STIX version with revoked: true).' }),
  false_positive: Type.Boolean(),
  note: Type.Union([Type.String(), Type.Null()]),
  feeds: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), { description: 'The feeds that gave it.' }),
  first_seen: Type.String({ format: 'date-time' }),
  last_seen: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type IndicatorOut = Static<typeof IndicatorSchema>;

export const IndicatorPatchSchema = Type.Object(
  { false_positive: Type.Optional(Type.Boolean()), note: Type.Optional(Type.Union([Type.String({ maxLength: 10000 }), Type.Null()])) },
  { additionalProperties: false },
);
export type IndicatorPatch = Static<typeof IndicatorPatchSchema>;

export const SyncSchema = Type.Object({ status: Type.Literal('queued'), next_pull_at: Type.String({ format: 'date-time' }) });


export const IndicatorMatchedSchema = Type.Object(
  {
    match: IndicatorMatchSchema,
    seen_in: Type.Enum(['tracking_token', 'leak_record'], { type: 'string', description: 'tracking_token: a hit of one of the organization\'s tokens; leak_record: an ingested leak record (its URL, host or IP).' }),
    severity: Type.Enum(['low', 'medium', 'high', 'critical'], { type: 'string', description: 'tracking_token: the exposure\'s (critical: a match raises it from high); leak_record: the record\'s.' }),
    tracking_token: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'tracking_token: the token.' }),
    exposure: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'tracking_token: the exposure (its timeline entry).' }),
    leak_record: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'leak_record: the record.' }),
    leak_source: Type.Union([Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), Type.Null()], { description: 'leak_record: its source.' }),
    occurred_at: Type.String({ format: 'date-time', description: 'When it was seen (the hit, or the ingest).' }),
  },
  { title: 'IndicatorMatched', description: 'A TLP:RED indicator\'s match is never an event: it stays in threatmon (the timeline, search and alerts show it to the organization).' },
);
export type IndicatorMatchedOut = Static<typeof IndicatorMatchedSchema>;

// What this module's events carry (see EventPayloads in the events module).
declare module '../events/index.js' {
  interface EventPayloads {
    'indicator.matched': IndicatorMatchedOut;
  }
}

/** A STIX 2.1 bundle uploaded to a stix feed (POST /feeds/<id>/upload/): read as a pull reads one. */
export const BundleUploadSchema = Type.Object(
  { type: Type.Literal('bundle'), id: Type.Optional(Type.String()), objects: Type.Array(Type.Unknown(), { maxItems: 200_000 }) },
  { additionalProperties: true, title: 'StixBundleUpload' },
);
