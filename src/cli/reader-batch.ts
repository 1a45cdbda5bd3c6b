import type { NormalisedRecord, RecordResult } from '../domain/leak-record.js';
import type { FieldError } from '../http/errors.js';

/**
 * How the import's reader thread hands normalised records to the writer: in columns, one flat array
 * of values per batch, not one object per record. Structured clone writes out every property name
 * of every object and builds each object back property by property: for the records of the bench
 * corpus that was about 3 us a record to send and 6 us to receive, against 1.3 and 2.6 us in
 * columns, and 0.7 us to make the records again on the writer's side.
 */

/** A record's fields, in the order they travel. */
const FIELDS = [
  'email',
  'username',
  'username_lower',
  'domain',
  'domain_rev',
  'ip',
  'ip_key',
  'phone',
  'full_name',
  'password_sha1',
  'password_masked',
  'extra',
  'leaked_at',
  'fingerprint',
  'key',
  'search_text',
] as const satisfies ReadonlyArray<keyof NormalisedRecord>;

// Every field of a record travels: this fails to compile when one is added to NormalisedRecord only.
const everyField: Exclude<keyof NormalisedRecord, (typeof FIELDS)[number]> extends never ? true : never = true;
void everyField;

const WIDTH = FIELDS.length;

export interface ReaderBatch {
  type: 'batch';
  /** Index (position in the file) of the batch's first item: items are numbered on from it. */
  start: number;
  count: number;
  /** The fields of each valid record, WIDTH values a record, in FIELDS order. */
  values: unknown[];
  /** Per item, the bytes of input it was read from. */
  bytes: number[];
  /** The items rejected, by position in the batch, ascending, with their errors. */
  rejected: Array<[number, FieldError[]]>;
}

/** A batch being filled (reader side). */
export class BatchBuilder {
  private batch: ReaderBatch;
  /** Bytes of input of the items added so far. */
  inputBytes = 0;

  constructor(start = 0) {
    this.batch = BatchBuilder.empty(start);
  }

  private static empty(start: number): ReaderBatch {
    return { type: 'batch', start, count: 0, values: [], bytes: [], rejected: [] };
  }

  get count(): number {
    return this.batch.count;
  }

  add(result: RecordResult, bytes: number): void {
    const b = this.batch;
    if (result.ok) {
      const r = result.record;
      for (let f = 0; f < WIDTH; f++) b.values.push(r[FIELDS[f] as (typeof FIELDS)[number]]);
    } else {
      b.rejected.push([b.count, result.errors]);
    }
    b.bytes.push(bytes);
    b.count++;
    this.inputBytes += bytes;
  }

  /** The batch, and a new empty one started after it. */
  take(): ReaderBatch {
    const full = this.batch;
    this.batch = BatchBuilder.empty(full.start + full.count);
    this.inputBytes = 0;
    return full;
  }
}

/** The record whose fields start at `o` (writer side): one literal, so every record has the same shape. */
function recordAt(v: unknown[], o: number): NormalisedRecord {
  return {
    email: v[o] as string | null,
    username: v[o + 1] as string | null,
    username_lower: v[o + 2] as string | null,
    domain: v[o + 3] as string | null,
    domain_rev: v[o + 4] as string | null,
    ip: v[o + 5] as string | null,
    ip_key: v[o + 6] as string | null,
    phone: v[o + 7] as string | null,
    full_name: v[o + 8] as string | null,
    password_sha1: v[o + 9] as string | null,
    password_masked: v[o + 10] as string | null,
    extra: v[o + 11] as Record<string, string>,
    leaked_at: v[o + 12] as string | null,
    fingerprint: v[o + 13] as string,
    key: v[o + 14] as string | undefined,
    search_text: v[o + 15] as string,
  };
}

/**
 * Each item of a batch as the writer takes it: its index, result and bytes of input, and with
 * `pauseAtEnd`, `pause` on the last (see LeaksService.ingest).
 */
export function* batchItems(b: ReaderBatch, pauseAtEnd = false): Generator<{ index: number; result: RecordResult; bytes: number; pause: boolean }> {
  let rejected = 0;
  let o = 0;
  for (let i = 0; i < b.count; i++) {
    const pause = pauseAtEnd && i === b.count - 1;
    const next = b.rejected[rejected];
    if (next !== undefined && next[0] === i) {
      rejected++;
      yield { index: b.start + i, result: { ok: false, errors: next[1] }, bytes: b.bytes[i] as number, pause };
      continue;
    }
    yield { index: b.start + i, result: { ok: true, record: recordAt(b.values, o) }, bytes: b.bytes[i] as number, pause };
    o += WIDTH;
  }
}
