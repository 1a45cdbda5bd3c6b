import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { AppHookRegistry, Observed } from './hooks.js';

/**
 * Leak records as JSON text (a search page, an alert's record) with `indicator_matches` added to
 * each one whose address or URL (`extra.url`, a stealer log's) the reading organization's indicators
 * name; the others unchanged, byte for byte. `nested`: the record is that key of each text's
 * object (an alert's `leak_record`). Without a feeds module answering, the texts as they are.
 */
export async function markRecords(hooks: AppHookRegistry, db: Kysely<DB>, orgId: string, texts: string[], nested?: 'leak_record'): Promise<string[]> {
  const [match] = hooks.of('indicators.match');
  if (!match || texts.length === 0) return texts;
  const parsed = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
  const records = parsed.map((p) => (nested ? (p[nested] as Record<string, unknown> | null) : p));
  const observed: Observed[] = records.map((r) => ({ ip: typeof r?.ip === 'string' ? r.ip : null, url: typeof (r?.extra as Record<string, unknown> | undefined)?.url === 'string' ? ((r!.extra as Record<string, string>).url as string) : null }));
  if (!observed.some((o) => o.ip || o.url)) return texts;
  const found = await match(db, orgId, observed);
  return texts.map((text, i) => {
    const matches = found[i] ?? [];
    if (!matches.length) return text;
    const record = records[i]!;
    record.indicator_matches = matches;
    return JSON.stringify(parsed[i]);
  });
}
