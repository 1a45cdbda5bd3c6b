import type { Selectable } from 'kysely';
import type { FeedAuth, FeedOut, IndicatorOut } from './feeds.schemas.js';
import type { FeedsTable, IndicatorsTable } from './feeds.tables.js';

export type FeedRow = Selectable<FeedsTable>;
export type IndicatorRow = Selectable<IndicatorsTable>;
const SECRET = '****';

/** A feed's credentials as reads show them (and the audit log keeps them): the kind, never a secret. */
export function maskAuth(auth: FeedAuth | null): Record<string, string> | null {
  if (!auth) return null;
  if (auth.type === 'basic') return { type: 'basic', username: auth.username, password: SECRET };
  if (auth.type === 'bearer') return { type: 'bearer', token: SECRET };
  return { type: 'header', name: auth.name, value: SECRET };
}

/** A URL with any user:password part masked. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = u.username ? SECRET : '';
    u.password = u.password ? SECRET : '';
    return u.toString();
  } catch {
    return url;
  }
}

export function presentFeed(row: FeedRow, whole = false): FeedOut {
  const options = JSON.parse(row.options) as { column?: string | number; type?: string; collections?: string[]; format?: FeedOut['format'] };
  const auth = row.auth ? (JSON.parse(row.auth) as FeedAuth) : null;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind as FeedOut['kind'],
    url: row.url === '' ? null : whole ? row.url : maskUrl(row.url),
    collections: options.collections ?? [],
    column: options.column ?? null,
    type: options.type ?? null,
    format: row.kind === 'misp' ? (options.format ?? 'misp') : null,
    auth: whole ? auth : maskAuth(auth),
    interval_seconds: Number(row.interval_seconds),
    is_active: Boolean(row.is_active),
    status: row.last_pull_at === null ? 'never_pulled' : row.last_error === null ? 'healthy' : 'failing',
    last_pull_at: row.last_pull_at,
    last_success_at: row.last_success_at,
    last_error: row.last_error,
    next_pull_at: row.next_pull_at,
    objects_read: Number(row.objects_read),
    indicators_added: Number(row.indicators_added),
    indicators_updated: Number(row.indicators_updated),
    indicators_retired: Number(row.indicators_retired),
    rejected: Number(row.rejected),
    reject_examples: JSON.parse(row.reject_examples) as string[],
    records_added: Number(row.records_added),
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentIndicator(row: IndicatorRow, feeds: Array<{ id: string; name: string }>): IndicatorOut {
  return {
    id: row.id,
    type: row.type as IndicatorOut['type'],
    value: row.value,
    name: row.name,
    stix_id: row.stix_id,
    confidence: row.confidence === null ? null : Number(row.confidence),
    tlp: row.tlp as IndicatorOut['tlp'],
    labels: JSON.parse(row.labels) as string[],
    valid_until: row.valid_until,
    revoked: Boolean(row.revoked),
    false_positive: Boolean(row.false_positive),
    note: row.note,
    feeds,
    first_seen: row.first_seen,
    last_seen: row.last_seen,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
