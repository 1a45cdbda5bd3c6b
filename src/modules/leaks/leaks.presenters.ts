import type { SavedSearchRow, SourceRow } from './leaks.repository.js';
import type { LeakSourceOut, SourceKind } from './leaks.schemas.js';

/** The leaks module's resources as the API shows them. */

export function presentSource(r: SourceRow): LeakSourceOut {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    domain: r.domain,
    breach_date: r.breach_date,
    discovered_at: r.discovered_at,
    data_classes: JSON.parse(r.data_classes) as LeakSourceOut['data_classes'],
    kind: r.kind as SourceKind,
    is_verified: Boolean(r.is_verified),
    is_fabricated: Boolean(r.is_fabricated),
    is_sensitive: Boolean(r.is_sensitive),
    is_spam_list: Boolean(r.is_spam_list),
    record_count: r.record_count,
    created_at: r.created_at,
  };
}

/** A saved search as the API shows it. */
export function presentSaved(r: SavedSearchRow) {
  return {
    id: r.id,
    name: r.name,
    query: JSON.parse(r.query) as Record<string, unknown>,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    last_run_at: r.last_run_at,
    last_result_count: r.last_result_count,
  };
}
