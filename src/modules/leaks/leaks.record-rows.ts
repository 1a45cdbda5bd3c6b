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

/**
 * The indexes of `keys` in key order, a repeat after its first. Sorted by the keys' first eight
 * bytes as two numbers, whole keys compared only on a tie: a Buffer.compare per comparison was a
 * tenth of a reader thread's time.
 */
export function keyOrder(keys: readonly Uint8Array[]): number[] {
  const [high, low] = [new Uint32Array(keys.length), new Uint32Array(keys.length)];
  keys.forEach((k, i) => {
    high[i] = (((k[0] as number) << 24) | ((k[1] as number) << 16) | ((k[2] as number) << 8) | (k[3] as number)) >>> 0;
    low[i] = (((k[4] as number) << 24) | ((k[5] as number) << 16) | ((k[6] as number) << 8) | (k[7] as number)) >>> 0;
  });
  return keys.map((_, i) => i).sort((x, y) => (high[x] as number) - (high[y] as number) || (low[x] as number) - (low[y] as number) || Buffer.compare(keys[x] as Uint8Array, keys[y] as Uint8Array));
}

/** The records' indexes in key order (`inKeyOrder`), each key's first only. */
export function eachKeyOnce(keys: Uint8Array[], inKeyOrder: number[]): number[] {
  return inKeyOrder.filter((i, n) => n === 0 || Buffer.compare(keys[i] as Uint8Array, keys[inKeyOrder[n - 1] as number] as Uint8Array) !== 0);
}

/** COPY's text format escapes these four characters; a value without them is written as it is. */
const NEEDS_ESCAPE = /[\\\t\n\r]/;
const EACH_ESCAPED = new RegExp(NEEDS_ESCAPE.source, 'g');
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
/** Bytes of each chunk copyChunks yields (about 180 rows; a chunk may end inside a row: COPY reads a stream). */
const CHUNK_BYTES = 128 * 1024;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * A batch's rows (their ids and keys) in COPY's text format (RECORD_COLUMNS order), in chunks of
 * about CHUNK_BYTES. Each value is encoded straight into the chunk's buffer: building each line as a
 * string, then the chunk, then its bytes, made most of a bulk load's garbage on the writer's thread.
 */
export function* copyChunks(records: NormalisedRecord[], ids: string[], keys: Uint8Array[], sourceId: string, at: string): Generator<Buffer> {
  let buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let n = 0;
  for (let i = 0; i < records.length; i++) {
    const values = recordValues(records[i] as NormalisedRecord, ids[i] as string, sourceId, at, keys[i]);
    for (let c = 0; c < values.length; c++) {
      const v = values[c] as CopyValue;
      const most = copyValueRoom(v);
      if (n + most > buf.length) {
        if (n) yield buf.subarray(0, n);
        buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most));
        n = 0;
      }
      if (c) buf[n++] = 0x09;
      n = writeCopyValue(buf, n, v);
    }
    buf[n++] = 0x0a;
  }
  if (n) yield buf.subarray(0, n);
}

/** A value of a row (recordValues): text, null, or the key's bytes. */
export type CopyValue = string | null | Uint8Array;

/** Room for `v` at its longest in COPY text (3 bytes a UTF-16 unit, doubled by escapes), with its tab and a newline. */
export const copyValueRoom = (v: CopyValue): number => (v === null ? 4 : v instanceof Uint8Array ? v.length * 2 + 5 : v.length * 6 + 2);

/** Writes `v` in COPY's text format into `buf` at `n` (room for it checked: copyValueRoom); returns where it ends. */
export function writeCopyValue(buf: Buffer, n: number, v: CopyValue): number {
  if (v === null) {
    buf[n++] = 0x5c; // \N
    buf[n++] = 0x4e;
  } else if (v instanceof Uint8Array) {
    // The key (bytea) in its hex form, whose backslash COPY's text format escapes: \\x...
    buf[n++] = 0x5c;
    buf[n++] = 0x5c;
    buf[n++] = 0x78;
    for (let b = 0; b < v.length; b++) {
      buf[n++] = HEX[(v[b] as number) >> 4] as number;
      buf[n++] = HEX[(v[b] as number) & 15] as number;
    }
  } else {
    n += buf.write(NEEDS_ESCAPE.test(v) ? v.replace(EACH_ESCAPED, (ch) => COPY_ESCAPES[ch] as string) : v, n, 'utf8');
  }
  return n;
}
