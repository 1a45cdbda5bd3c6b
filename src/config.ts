import os from 'node:os';
import path from 'node:path';

export const PLANS = ['starter', 'professional', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  /** `sqlite:PATH` or `postgres://...` */
  readonly databaseUrl: string;
  readonly databaseKind: 'sqlite' | 'postgres';
  readonly redisUrl: string | null;
  readonly host: string;
  readonly port: number;
  /** null: generated once and kept in `dataDir` (embedded mode). */
  readonly jwtSecret: string | null;
  readonly jwtIssuer: string;
  readonly jwtAudience: string;
  readonly accessTtlSeconds: number;
  readonly refreshTtlSeconds: number;
  readonly adminPassword: string | null;
  readonly trustProxy: boolean;
  /** Scheme, host and optional path prefix of every absolute link the API writes (next/previous); null: from the request. */
  readonly publicUrl: string | null;
  readonly corsOrigins: readonly string[];
  /** Webhooks and chat channels may post to private and loopback addresses (THREATMON_WEBHOOK_ALLOW_PRIVATE). */
  readonly allowPrivateDestinations: boolean;
  /** Where notification e-mail is sent: smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps://; null: e-mail channels fail with a clear error. */
  readonly smtpUrl: string | null;
  /** The From of notification e-mail. */
  readonly smtpFrom: string;
  /** How long what was delivered is kept (webhook messages and attempts, notification messages, outbox events), in seconds (THREATMON_WEBHOOK_RETENTION). */
  readonly deliveryRetentionSeconds: number;
  readonly metrics: boolean;
  readonly logLevel: LogLevel;
  readonly planLimits: Readonly<Record<Plan, number>>;
  readonly rateLimits: boolean;
  /** Where generated secrets live: the SQLite file's folder, or ./data for PostgreSQL. */
  readonly dataDir: string;
  /** API processes sharing the port (node:cluster); 1 serves from the starting process. */
  readonly workers: number;
  /** PostgreSQL: run statements as named prepared statements, planned once per connection. */
  readonly pgPreparedStatements: boolean;
  /** How long an API process may answer "is this user still active" from memory (0: ask the database every time). */
  readonly principalCacheMs: number;
  /** PostgreSQL read replicas for leak searches, statistics and saved-search runs (THREATMON_DATABASE_READ_URLS). */
  readonly databaseReadUrls: readonly string[];
  /** PostgreSQL servers the leak records are spread over (THREATMON_CORPUS_SHARDS; empty: the main database holds them). */
  readonly corpusShards: string[];
  /** A replica further behind than this is skipped until it catches up (THREATMON_REPLICA_MAX_LAG, seconds). */
  readonly replicaMaxLagMs: number;
  /** How often each replica's health and lag are checked (THREATMON_REPLICA_CHECK_MS; 0: at start-up only). */
  readonly replicaCheckMs: number;
  /** The Have I Been Pwned-compatible password range answers without an API key (k-anonymity: it reveals only counts of suffixes). */
  readonly hibpPublicRange: boolean;
  /** A leak search stops counting its matches past this many, or past its page's end (THREATMON_SEARCH_COUNT_LIMIT). */
  readonly searchCountLimit: number;
  /** A request whose body stops arriving for this long is answered 408 and closed (THREATMON_BODY_TIMEOUT_MS; 0: never). */
  readonly bodyTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Seconds, as `900`, `900s`, `15m`, `1h` or `7d`. */
export function parseDuration(name: string, raw: string): number {
  const m = /^\s*(\d+)\s*([smhd]?)\s*$/.exec(raw);
  if (!m) throw new ConfigError(name, `expected a duration such as 900, 15m, 1h or 7d, got "${raw}"`);
  const seconds = Number(m[1]) * (DURATION_UNITS[m[2] || 's'] ?? 1);
  if (seconds < 1) throw new ConfigError(name, 'must be at least one second');
  return seconds;
}

function readDuration(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : parseDuration(name, raw);
}

export function parsePlanLimits(name: string, raw: string): Record<Plan, number> {
  const limits: Record<Plan, number> = { starter: 100, professional: 500, enterprise: 2000 };
  for (const part of raw.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m) throw new ConfigError(name, `expected plan=limit pairs such as starter=100, got "${part.trim()}"`);
    const plan = m[1] as Plan;
    if (!PLANS.includes(plan)) throw new ConfigError(name, `unknown plan "${m[1]}" (plans: ${PLANS.join(', ')})`);
    const limit = Number(m[2]);
    if (limit < 1) throw new ConfigError(name, `limit for ${plan} must be at least 1`);
    limits[plan] = limit;
  }
  return limits;
}

/** A process count: a whole number from 1 to 64, or `auto` for one per core. */
export function parseWorkers(name: string, raw: string): number {
  const v = raw.trim().toLowerCase();
  if (v === 'auto') return os.availableParallelism();
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 64) throw new ConfigError(name, `expected a number of processes from 1 to 64, or auto, got "${raw}"`);
  return n;
}

/** Milliseconds, a whole number from 0 to one hour. */
export function parseMilliseconds(name: string, raw: string): number {
  const v = raw.trim();
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 3_600_000) throw new ConfigError(name, `expected a number of milliseconds from 0 to 3600000, got "${raw}"`);
  return n;
}

/** A count of records, from 1 to 100,000,000. */
export function parseCountLimit(name: string, raw: string): number {
  const v = raw.trim().replace(/_/g, '');
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 100_000_000) throw new ConfigError(name, `expected a number of records from 1 to 100000000, got "${raw}"`);
  return n;
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `https://api.example.com` or with a path prefix (no trailing slash kept); '' is unset. */
/** A URL with its user and password hidden: for messages and logs. */
export function redactedUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** Whether `url` is a postgres:// (or postgresql://) URL. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\/[^/\s]+/.test(url);
}

/** A comma-separated list of PostgreSQL URLs (`what` are for PostgreSQL only: said when the database is not). */
function readPostgresUrls(env: Env, name: string, databaseKind: string, what: string): string[] {
  const urls = (env[name] || '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const u of urls) {
    if (databaseKind !== 'postgres') throw new ConfigError(name, `${what} for PostgreSQL: set THREATMON_DATABASE_URL to postgres://... too`);
    if (!isPostgresUrl(u)) throw new ConfigError(name, `expected comma-separated postgres://... URLs, got "${redactedUrl(u)}"`);
  }
  return urls;
}

export function parsePublicUrl(name: string, raw: string): string | null {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http(s) URL such as https://api.example.com, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(name, `expected an absolute http(s) URL without query, fragment or credentials, got "${raw}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Parses THREATMON_* variables once; an invalid value throws a ConfigError naming the variable. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const databaseUrl = env.THREATMON_DATABASE_URL || 'sqlite:./data/threatmon.db';
  let databaseKind: Config['databaseKind'];
  if (databaseUrl.startsWith('sqlite:')) {
    if (databaseUrl.length === 'sqlite:'.length) throw new ConfigError('THREATMON_DATABASE_URL', 'sqlite: needs a file path');
    databaseKind = 'sqlite';
  } else if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    databaseKind = 'postgres';
  } else {
    throw new ConfigError('THREATMON_DATABASE_URL', `expected sqlite:PATH or postgres://..., got "${databaseUrl}"`);
  }

  const redisUrl = env.THREATMON_REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError('THREATMON_REDIS_URL', `expected redis://..., got "${redisUrl}"`);
  }

  const portRaw = env.THREATMON_PORT || '8000';
  const port = Number(portRaw);
  if (!/^\d+$/.test(portRaw) || port > 65535) {
    throw new ConfigError('THREATMON_PORT', `expected a port number 0-65535, got "${portRaw}"`);
  }

  const jwtSecret = env.THREATMON_JWT_SECRET || null;
  if (jwtSecret !== null && Buffer.byteLength(jwtSecret) < 32) {
    throw new ConfigError('THREATMON_JWT_SECRET', 'must be at least 32 bytes for HS256');
  }

  const adminPassword = env.THREATMON_ADMIN_PASSWORD || null;
  if (adminPassword !== null && adminPassword.length < 12) {
    throw new ConfigError('THREATMON_ADMIN_PASSWORD', 'must be at least 12 characters');
  }

  const corsOrigins = (env.THREATMON_CORS_ORIGINS || '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('THREATMON_CORS_ORIGINS', `expected origins such as https://app.example.com, got "${origin}"`);
    }
  }

  const databaseReadUrls = readPostgresUrls(env, 'THREATMON_DATABASE_READ_URLS', databaseKind, 'read replicas are');
  const corpusShards = readPostgresUrls(env, 'THREATMON_CORPUS_SHARDS', databaseKind, 'corpus shards are');
  if (new Set(corpusShards).size !== corpusShards.length) throw new ConfigError('THREATMON_CORPUS_SHARDS', 'a server is listed twice');

  const publicUrl = parsePublicUrl('THREATMON_PUBLIC_URL', env.THREATMON_PUBLIC_URL || '');

  const logLevel = (env.THREATMON_LOG_LEVEL || 'info').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('THREATMON_LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  }

  const rateLimitsRaw = (env.THREATMON_RATE_LIMITS || 'on').toLowerCase();
  if (!['on', 'off'].includes(rateLimitsRaw)) {
    throw new ConfigError('THREATMON_RATE_LIMITS', `expected on or off, got "${env.THREATMON_RATE_LIMITS}"`);
  }

  const workers = parseWorkers('THREATMON_WORKERS', env.THREATMON_WORKERS || '1');

  // An in-memory database has no folder: its secrets go to ./data like PostgreSQL's, not to the working directory.
  const sqliteFile = databaseKind === 'sqlite' ? databaseUrl.slice('sqlite:'.length) : null;
  const dataDir = env.THREATMON_DATA_DIR || (sqliteFile && sqliteFile !== ':memory:' ? path.dirname(path.resolve(sqliteFile)) : path.resolve('data'));

  const config: Config = {
    databaseUrl,
    databaseKind,
    redisUrl,
    host: env.THREATMON_HOST || '127.0.0.1',
    port,
    jwtSecret,
    jwtIssuer: 'threatmon',
    jwtAudience: 'threatmon-api',
    accessTtlSeconds: readDuration(env, 'THREATMON_ACCESS_TTL', 15 * 60),
    refreshTtlSeconds: readDuration(env, 'THREATMON_REFRESH_TTL', 7 * 86400),
    adminPassword,
    trustProxy: readBool(env, 'THREATMON_TRUST_PROXY', false),
    publicUrl,
    corsOrigins,
    allowPrivateDestinations: readBool(env, 'THREATMON_WEBHOOK_ALLOW_PRIVATE', false),
    smtpUrl: parseSmtpUrl(env.THREATMON_SMTP_URL || ''),
    smtpFrom: env.THREATMON_SMTP_FROM || 'threatmon <threatmon@localhost>',
    deliveryRetentionSeconds: readDuration(env, 'THREATMON_WEBHOOK_RETENTION', 30 * 86400),
    metrics: readBool(env, 'THREATMON_METRICS', false),
    logLevel,
    planLimits: Object.freeze(
      env.THREATMON_PLAN_LIMITS
        ? parsePlanLimits('THREATMON_PLAN_LIMITS', env.THREATMON_PLAN_LIMITS)
        : { starter: 100, professional: 500, enterprise: 2000 },
    ),
    rateLimits: rateLimitsRaw === 'on',
    dataDir,
    workers,
    pgPreparedStatements: readBool(env, 'THREATMON_PG_PREPARED_STATEMENTS', true),
    principalCacheMs: parseMilliseconds('THREATMON_PRINCIPAL_CACHE_MS', env.THREATMON_PRINCIPAL_CACHE_MS || '2000'),
    hibpPublicRange: readBool(env, 'THREATMON_HIBP_PUBLIC_RANGE', false),
    databaseReadUrls,
    corpusShards,
    replicaMaxLagMs: readDuration(env, 'THREATMON_REPLICA_MAX_LAG', 5) * 1000,
    replicaCheckMs: parseMilliseconds('THREATMON_REPLICA_CHECK_MS', env.THREATMON_REPLICA_CHECK_MS || '1000'),
    searchCountLimit: parseCountLimit('THREATMON_SEARCH_COUNT_LIMIT', env.THREATMON_SEARCH_COUNT_LIMIT || '10000'),
    bodyTimeoutMs: parseMilliseconds('THREATMON_BODY_TIMEOUT_MS', env.THREATMON_BODY_TIMEOUT_MS || '30000'),
    ...overrides,
  };
  return Object.freeze(config);
}

function parseSmtpUrl(raw: string): string | null {
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('THREATMON_SMTP_URL', 'expected smtp://[user:password@]host[:port] or smtps://...');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('THREATMON_SMTP_URL', `expected an smtp:// or smtps:// URL, got ${url.protocol}`);
  return raw;
}
