import type { ExposureRow } from './tracking-tokens.repository.js';
import type { ExposureOut } from './tracking-tokens.schemas.js';

export function presentExposure(r: ExposureRow): ExposureOut {
  return {
    id: r.id,
    token: r.token_id,
    channel: r.channel as ExposureOut['channel'],
    occurred_at: r.occurred_at,
    source_ip: r.source_ip,
    user_agent: r.user_agent,
    referer: r.referer,
    method: r.method,
    path: r.path,
    leak_record: r.leak_record_id,
    leak_source: r.leak_source_id ? { id: r.leak_source_id, name: r.leak_source_name ?? '' } : null,
    severity: r.indicator_matches === '[]' ? 'high' : 'critical',
    indicator_matches: JSON.parse(r.indicator_matches) as ExposureOut['indicator_matches'],
  };
}
