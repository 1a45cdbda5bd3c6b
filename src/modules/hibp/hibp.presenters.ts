import { DATA_CLASS_NAMES } from '../../domain/hibp-data-classes.js';
import type { SourceRow } from '../leaks/index.js';

/** The corpus in Have I Been Pwned's shapes. */

export { DATA_CLASS_NAMES } from '../../domain/hibp-data-classes.js';

/** ISO 8601 to the second, as Have I Been Pwned writes dates ("2013-12-04T00:00:00Z"). */
const toSecond = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

export function presentBreach(s: SourceRow) {
  const stealer = s.kind === 'stealer_log';
  return {
    Name: s.name,
    Title: s.name,
    Domain: s.domain ?? '',
    BreachDate: s.breach_date ?? s.created_at.slice(0, 10),
    AddedDate: toSecond(s.created_at),
    ModifiedDate: toSecond(s.updated_at),
    PwnCount: s.record_count,
    Description: s.description,
    LogoPath: '',
    DataClasses: (JSON.parse(s.data_classes) as string[]).flatMap((c) => DATA_CLASS_NAMES[c] ?? []),
    IsVerified: Boolean(s.is_verified),
    IsFabricated: Boolean(s.is_fabricated),
    IsSensitive: Boolean(s.is_sensitive),
    IsRetired: false,
    IsSpamList: Boolean(s.is_spam_list),
    IsMalware: stealer,
    IsStealerLog: stealer,
    IsSubscriptionFree: false,
  };
}
