import { type Static, Type } from 'typebox';
import { IndicatorMatchSchema } from '../indicator-match.schema.js';
import { DATA_CLASSES, SEVERITIES } from '../../domain/leak-record.js';
import { Nullable, Timestamp, Uuid } from '../../http/schemas.js';

const DataClasses = Type.Array(Type.Enum([...DATA_CLASSES], { type: 'string' }), {
  uniqueItems: true,
  description: `Kinds of data the breach exposed: ${DATA_CLASSES.join(', ')}.`,
});
const DateOnly = (description: string) => Type.String({ format: 'date', description });

const RecordSeveritySchema = Type.Enum([...SEVERITIES], {
  type: 'string',
  description: 'What it exposes: `low` (no secret: an e-mail, a username, a phone number...), `medium` (a password hash only), `high` (a password in plaintext), `critical` (a stealer-log credential: a site\'s URL or an app, with its login and plaintext password).',
});

/** What a leak source is. */
export const SOURCE_KINDS = ['breach', 'combolist', 'stealer_log', 'paste', 'other'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SourceKindSchema = Type.Enum([...SOURCE_KINDS], {
  type: 'string',
  description: 'What it is: `breach` (a service\'s data, the default), `combolist` (credential lists compiled from many), `stealer_log` (credentials taken by malware from browsers), `paste` (posted text), `other`.',
});

export const LeakSourceSchema = Type.Object(
  {
    id: Uuid('Source id.'),
    name: Type.String({ description: 'Unique name of the breach or dump.' }),
    description: Type.String({ description: 'What it is and where it came from.' }),
    domain: Nullable(Type.String({ description: 'The breached site\'s domain.' }), 'The domain of the breached site (Have I Been Pwned\'s Domain), or null.'),
    breach_date: Nullable(DateOnly('When the breach happened.'), 'When the breach happened (YYYY-MM-DD), or null.'),
    discovered_at: Nullable(Timestamp('When it was found.'), 'When the dump was found, or null.'),
    data_classes: DataClasses,
    kind: SourceKindSchema,
    is_verified: Type.Boolean({ description: 'Whether the breach is confirmed genuine.' }),
    is_fabricated: Type.Boolean({ description: 'Whether the data is known to be made up (not from a real breach).' }),
    is_sensitive: Type.Boolean({ description: 'Whether being in it reveals something sensitive about a person (kept off public lookups).' }),
    is_spam_list: Type.Boolean({ description: 'Whether it is a list of addresses for spam rather than a breach of a service.' }),
    record_count: Type.Integer({ description: 'Records ingested from it.' }),
    created_at: Timestamp('When it was added.'),
  },
  { title: 'LeakSource' },
);
export type LeakSourceOut = Static<typeof LeakSourceSchema>;

export const LeakSourceCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Unique name.' }),
    description: Type.Optional(Type.String({ maxLength: 10000, description: 'Free text.' })),
    domain: Type.Optional(Nullable(Type.String({ maxLength: 253, description: 'The breached site\'s domain (normalised; 400 when it is none).' }))),
    breach_date: Type.Optional(Nullable(DateOnly('YYYY-MM-DD.'))),
    discovered_at: Type.Optional(Nullable(Timestamp('When it was found.'))),
    data_classes: Type.Optional(DataClasses),
    kind: Type.Optional(SourceKindSchema),
    is_verified: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    is_fabricated: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    is_sensitive: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    is_spam_list: Type.Optional(Type.Boolean({ description: 'Default false.' })),
  },
  { additionalProperties: false },
);

export const LeakSourcePatchSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Unique name.' })),
    description: Type.Optional(Type.String({ maxLength: 10000 })),
    domain: Type.Optional(Nullable(Type.String({ maxLength: 253, description: 'The breached site\'s domain (normalised; 400 when it is none).' }))),
    breach_date: Type.Optional(Nullable(DateOnly('YYYY-MM-DD.'))),
    discovered_at: Type.Optional(Nullable(Timestamp('When it was found.'))),
    data_classes: Type.Optional(DataClasses),
    kind: Type.Optional(SourceKindSchema),
    is_verified: Type.Optional(Type.Boolean()),
    is_fabricated: Type.Optional(Type.Boolean()),
    is_sensitive: Type.Optional(Type.Boolean()),
    is_spam_list: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const LeakRecordSchema = Type.Object(
  {
    id: Uuid('Record id.'),
    source: Type.Object({ id: Uuid('Source id.'), name: Type.String() }, { description: 'The breach it comes from.' }),
    email: Nullable(Type.String(), 'Lower-cased e-mail (IDN domain as punycode).'),
    username: Nullable(Type.String(), 'Username as leaked.'),
    domain: Nullable(Type.String(), 'Domain, from the record or its e-mail.'),
    ip: Nullable(Type.String(), 'IP address, canonical (IPv4-mapped IPv6 shown as IPv4).'),
    phone: Nullable(Type.String(), 'Phone number: digits, with a leading + when given.'),
    full_name: Nullable(Type.String(), 'Name as leaked.'),
    password_masked: Nullable(Type.String(), 'The password masked (first and last character); null when only its hash leaked.'),
    password_sha1_prefix: Nullable(Type.String(), 'First 5 hex digits of the password SHA-1 (upper case): query /leaks/passwords/range/ with it.'),
    has_password: Type.Boolean({ description: 'Whether a password (or its hash) leaked.' }),
    severity: RecordSeveritySchema,
    // additionalProperties, not Type.Record: a record's pattern (^.*$) does not match a key holding a
    // line break, and the serializer would drop that leaked field.
    extra: Type.Object({}, { additionalProperties: Type.String(), description: 'Other leaked fields, as strings.' }),
    leaked_at: Nullable(Timestamp('When it leaked.'), 'When the record leaked, or null.'),
    created_at: Timestamp('When it was ingested.'),
    indicator_matches: Type.Optional(
      Type.Array(IndicatorMatchSchema, { description: 'Only when the reading organization\'s live indicators (section 7b) name the record\'s ip, its `extra.url` (a stealer log\'s) or that URL\'s host: which, and what they say. Absent otherwise.' }),
    ),
  },
  { title: 'LeakRecord' },
);

/** A record as ingested (POST /leaks/sources/<id>/records/): each is validated on its own, a bad one rejected alone. */
export const LeakRecordInputSchema = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320, description: 'E-mail address (normalised: lower case, IDN domain as punycode).' })),
    username: Type.Optional(Type.String({ maxLength: 256 })),
    domain: Type.Optional(Type.String({ maxLength: 253, description: 'Domain; taken from the e-mail when absent.' })),
    ip: Type.Optional(Type.String({ maxLength: 64, description: 'IPv4 or IPv6 address.' })),
    phone: Type.Optional(Type.String({ maxLength: 40, description: 'Phone number, 6 to 20 digits.' })),
    full_name: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024, description: 'Plaintext: never stored (its SHA-1, NTLM hash and a mask are).' })),
    password_sha1: Type.Optional(Type.String({ pattern: '^[0-9A-Fa-f]{40}$', description: 'SHA-1 of the password, when only the hash leaked.' })),
    extra: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), { description: 'Other fields (at most 50), kept as strings.' })),
    leaked_at: Type.Optional(Type.String({ description: 'ISO 8601 date or timestamp.' })),
  },
  { title: 'LeakRecordInput', additionalProperties: false, description: 'One of email, username, ip, phone is needed.' },
);

export const IngestResultSchema = Type.Object({
  accepted: Type.Integer({ description: 'New records stored.' }),
  duplicates: Type.Integer({ description: 'Records already in this source (same fingerprint), or repeated.' }),
  rejected: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'Position in the array, or line number (from 0, blank lines skipped) in NDJSON.' }),
      errors: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    }),
    { description: 'Invalid records and why (at most 10,000 listed); the valid ones are kept.' },
  ),
  alerts_raised: Type.Integer({ description: 'Monitoring alerts the new records raised.' }),
  exposures_found: Type.Integer({ description: 'Tracking-token exposures the new records revealed.' }),
});

export const StatsSchema = Type.Object({
  total_records: Type.Integer(),
  total_sources: Type.Integer(),
  records_with_password: Type.Integer(),
  by_data_class: Type.Record(Type.String(), Type.Integer(), { description: 'Records carrying each data class.' }),
  top_sources: Type.Array(Type.Object({ id: Uuid('Source id.'), name: Type.String(), record_count: Type.Integer() }), { description: 'The 10 largest sources.' }),
  by_month: Type.Array(Type.Object({ month: Type.String({ description: 'YYYY-MM' }), records: Type.Integer() }), {
    description: 'Records per month over the last 24 months, by leaked_at, else the source breach_date.',
  }),
  latest_source: Nullable(Type.Object({ id: Uuid('Source id.'), name: Type.String(), breach_date: Nullable(Type.String()), created_at: Timestamp('Added.') }), 'The most recently added source.'),
  organization: Type.Object({
    monitors: Type.Integer({ description: 'Your monitors.' }),
    alerts_open: Type.Integer({ description: 'Your alerts that are new or acknowledged.' }),
    alerts_last_30_days: Type.Integer({ description: 'Your alerts raised in the last 30 days.' }),
  }),
});

export const SavedSearchSchema = Type.Object(
  {
    id: Uuid('Saved search id.'),
    name: Type.String({ description: 'Name.' }),
    query: Type.Record(Type.String(), Type.Unknown(), { description: 'The /leaks/search/ parameters.' }),
    created_by: Nullable(Uuid('Creator.')),
    created_at: Timestamp('Created.'),
    updated_at: Timestamp('Last change.'),
    last_run_at: Nullable(Timestamp('Last run.'), 'When its results were last fetched, or null.'),
    last_result_count: Nullable(Type.Integer(), 'Result count at the last run, or null.'),
  },
  { title: 'SavedSearch' },
);
