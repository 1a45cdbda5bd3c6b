import { type NormalisedRecord, recordKey, STORED_FIELDS } from '../../domain/leak-record.js';
import type { LeakRecordsTable } from './leaks.tables.js';

/** Records as the rows leak_records stores: their columns, their values, their COPY text. */

/** The columns of an inserted record: its id and source, its stored fields (STORED_FIELDS), when it was stored. */
export const RECORD_COLUMNS = ['id', 'source_id', ...STORED_FIELDS, 'created_at'] as const;

// Every column of the table is written, and no other: this fails to compile when a column is added on one side only.
const sameColumns: [Exclude<keyof LeakRecordsTable, (typeof RECORD_COLUMNS)[number]>, Exclude<(typeof RECORD_COLUMNS)[number], keyof LeakRecordsTable>] extends [never, never] ? true : never = true;
void sameColumns;

/**
 * A record's values in RECORD_COLUMNS order (extra as JSON text, its key for the fingerprint),
 * spelled out rather than mapped over STORED_FIELDS: this runs for every record of a bulk load.
 * test/modules/leak-records.test.ts holds it to RECORD_COLUMNS.
 */
export function recordValues(r: NormalisedRecord, id: string, sourceId: string, at: string, key: Uint8Array = r.key ?? recordKey(sourceId, r.fingerprint)) {
  return [id, sourceId, r.email, r.username, r.username_lower, r.domain, r.domain_rev, r.ip, r.ip_key, r.phone, r.full_name, r.password_sha1, r.password_masked, JSON.stringify(r.extra), r.leaked_at, key, r.search_text, r.email_domain_rev, r.severity, r.password_ntlm, at];
}

/** The records' indexes in key order (`inKeyOrder`), each key's first only. */
export function eachKeyOnce(keys: Uint8Array[], inKeyOrder: number[]): number[] {
  return inKeyOrder.filter((i, n) => n === 0 || Buffer.compare(keys[i] as Uint8Array, keys[inKeyOrder[n - 1] as number] as Uint8Array) !== 0);
}

/** A value in COPY's text format: \N for null, and the four characters COPY reads as special escaped. */
function copyText(v: string | null): string {
  if (v === null) return '\\N';
  return /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c] as string) : v;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A batch's rows (their ids and keys) in COPY's text format (RECORD_COLUMNS order), in chunks of 256 rows. */
export function* copyChunks(records: NormalisedRecord[], ids: string[], keys: Uint8Array[], sourceId: string, at: string): Generator<string> {
  let chunk = '';
  for (let i = 0; i < records.length; i++) {
    const values = recordValues(records[i] as NormalisedRecord, ids[i] as string, sourceId, at, keys[i]);
    let line = '';
    for (let c = 0; c < values.length; c++) {
      const v = values[c];
      // The key (bytea) in its hex form, whose backslash COPY's text format escapes.
      line += (c ? '\t' : '') + (v instanceof Uint8Array ? `\\\\x${Buffer.from(v).toString('hex')}` : copyText(v as string | null));
    }
    chunk += `${line}\n`;
    if ((i & 255) === 255) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
