/** A STIX 2.1 indicator as a feed serves one: pattern type stix, id numbered `n`. */
export const stixIndicator = (n: number, pattern: string, extra: Record<string, unknown> = {}) => ({
  type: 'indicator',
  spec_version: '2.1',
  id: `indicator--00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  created: '2026-11-01T00:00:00.000Z',
  modified: '2026-11-01T00:00:00.000Z',
  pattern,
  pattern_type: 'stix',
  valid_from: '2026-11-01T00:00:00Z',
  ...extra,
});
