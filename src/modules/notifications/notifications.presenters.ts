import type { ChannelRow } from './notifications.repository.js';
import type { ChannelKind, ChannelOut } from './notifications.schemas.js';

/** A channel's JSON list column (events, monitors, tracking tokens) as a list. */
export const list = (json: string) => JSON.parse(json) as string[];

/** An incoming-webhook URL shown after its creation: scheme and host, and its last 4 characters. */
export function maskTarget(kind: string, target: string): string {
  if (kind === 'email') return target;
  try {
    const u = new URL(target);
    return `${u.protocol}//${u.host}/…${target.slice(-4)}`;
  } catch {
    return '…';
  }
}

export function presentChannel(r: ChannelRow, revealTarget = false): ChannelOut {
  const active = Boolean(r.is_active);
  const failures = Number(r.consecutive_failures);
  return {
    id: r.id,
    kind: r.kind as ChannelKind,
    name: r.name,
    target: revealTarget ? r.target : maskTarget(r.kind, r.target),
    events: list(r.events),
    min_severity: r.min_severity as ChannelOut['min_severity'],
    monitors: list(r.monitors),
    tracking_tokens: list(r.tracking_tokens),
    personal_data: Boolean(r.personal_data),
    per_minute: Number(r.per_minute),
    is_active: active,
    status: !active ? 'disabled' : failures > 0 ? 'failing' : 'healthy',
    last_success_at: r.last_success_at,
    last_failure_at: r.last_failure_at,
    last_error: r.last_error,
    consecutive_failures: failures,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
