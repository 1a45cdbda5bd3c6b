import { type NormalisedRecord, type RecordResult, type RecordSeverity, STORED_FIELDS } from '../domain/leak-record.js';
import type { FieldError } from '../http/errors.js';
import type { IngestItem } from '../modules/leaks/index.js';
import { BATCH_SIZE, type EncodedRows, MAX_BATCH_BYTES, type RowsMade, RowsInProgress } from '../modules/leaks/index.js';
import { uuidV7Ids } from '../runtime/ids.js';

/**
 * How the import's reader thread hands normalised records to the writer: in columns, one flat array
 * of values per batch, not one object per record, which structured clone would write out and build
 * back property by property (about twice the cost). Each record's stored key (16 bytes) travels in
 * one buffer for the batch, of which the writer binds a view instead of making a Buffer per key.
 */

/** A record's fields, in the order they travel (the order they are stored). */
const FIELDS = STORED_FIELDS;

const WIDTH = FIELDS.length;
/** Bytes of a stored record key (see recordKey). */
const KEY_BYTES = 16;

export interface ReaderBatch {
  type: 'batch';
  /** Index (position in the file) of the batch's first item: items are numbered on from it. */
  start: number;
  count: number;
  /** The fields of each valid record, WIDTH values a record, in FIELDS order (none when `encoded`). */
  values: unknown[];
  /** The key of each valid record, KEY_BYTES each, in the same order. Every record of a batch has its key. */
  keys: Uint8Array;
  /** Made with RowsMade: the valid records as COPY rows instead of values (see IngestItem.encoded). */
  encoded?: { rows: EncodedRows; records: number };
  /** Per item, the bytes of input it was read from. */
  bytes: number[];
  /** The items rejected, by position in the batch, ascending, with their errors. */
  rejected: Array<[number, FieldError[]]>;
  /** Per item, its line in the file (line formats): reported as the item's index instead of its position. */
  lines?: number[];
  /**
   * The search words of its records not sent with an earlier batch of the same read (see
   * IngestItem.words): the writer's share of keeping leak_words, done on the reader's core.
   */
  words: string[];
}

/** Most words a reader remembers having sent (about 10 MB); past it, it starts again. */
const MAX_SENT_WORDS = 200_000;

/** How a reader makes its batches into COPY rows: see LeaksService.rowsMadeByReader. */
export type MakeRows = RowsMade & { sourceId: string; maxRecords: number };

/** A batch being filled (reader side). */
export class BatchBuilder {
  /** With MakeRows: the batch's valid records (their keys in `keys`) made into rows as they come, put in order when it is taken. */
  private readonly made?: { rows: RowsInProgress; readonly newId: () => string; limit: number };
  private batch: ReaderBatch;
  /** The keys of the batch being filled, in a buffer that grows as needed (`keys` is cut from it). */
  private keys = Buffer.alloc(1000 * KEY_BYTES);
  /** Bytes of input of the items added so far. */
  inputBytes = 0;
  /** Search words sent with a batch taken before, or in this one's `words` already. */
  private readonly sentWords = new Set<string>();

  constructor(
    start = 0,
    private readonly makeRows?: MakeRows,
  ) {
    this.batch = BatchBuilder.empty(start);
    // Batches as the writer would cut them (see IngestRun): from BATCH_SIZE, doubling.
    if (makeRows) {
      const { sourceId, at, slotted, breachDate } = makeRows;
      this.made = { rows: new RowsInProgress({ sourceId, at, slotted, counting: { breachDate } }), newId: uuidV7Ids(), limit: Math.min(BATCH_SIZE, makeRows.maxRecords) };
    }
  }

  /** Whether the batch is to be sent now: `records` and `bytes` are the reader's own limits, rows made have the writer's. */
  full(records: number, bytes: number): boolean {
    return this.made ? this.batch.count >= this.made.limit || this.inputBytes >= MAX_BATCH_BYTES : this.batch.count >= records || this.inputBytes >= bytes;
  }

  private static empty(start: number): ReaderBatch {
    return { type: 'batch', start, count: 0, values: [], keys: new Uint8Array(0), bytes: [], rejected: [], words: [] };
  }

  get count(): number {
    return this.batch.count;
  }

  /** Index (position in the input) of the batch's first item. */
  get start(): number {
    return this.batch.start;
  }

  /** Adds an item read from `bytes` of input; a valid record with its key (recordKeyHex), written straight into the batch's keys. */
  add(result: RecordResult, bytes: number, keyHex?: string, line?: number): void {
    const b = this.batch;
    if (line !== undefined) (b.lines ??= []).push(line);
    if (result.ok && this.made) {
      const n = this.made.rows.count;
      this.writeKey(n, keyHex);
      this.made.rows.add(result.record, this.keys.subarray(n * KEY_BYTES, (n + 1) * KEY_BYTES));
    } else if (result.ok) {
      const r = result.record;
      // Its key goes where its values start, counted in records.
      this.writeKey(b.values.length / WIDTH, keyHex);
      for (let f = 0; f < WIDTH; f++) b.values.push(r[FIELDS[f] as (typeof FIELDS)[number]]);
      this.addWords(r);
    } else {
      b.rejected.push([b.count, result.errors]);
    }
    b.bytes.push(bytes);
    b.count++;
    this.inputBytes += bytes;
  }

  /** The key of the batch's record `n` (valid records counted), written into the batch's keys. */
  private writeKey(n: number, keyHex: string | undefined) {
    if (keyHex?.length !== KEY_BYTES * 2) throw new Error('a record sent to the writer needs its key (see recordKeyHex)');
    const at = n * KEY_BYTES;
    if (at + KEY_BYTES > this.keys.length) {
      const grown = Buffer.alloc(this.keys.length * 2);
      this.keys.copy(grown);
      this.keys = grown;
    }
    this.keys.write(keyHex, at, 'hex');
  }

  /** The record's search words not sent yet, with the batch. */
  private addWords(r: NormalisedRecord) {
    for (const w of r.search_text.split(' ')) {
      if (w && !this.sentWords.has(w)) {
        this.sentWords.add(w);
        this.batch.words.push(w);
      }
    }
  }

  /** The batch, and a new empty one started after it. */
  take(): ReaderBatch {
    const full = this.batch;
    const made = this.made;
    if (made && this.makeRows && made.rows.count) {
      const records = made.rows.count;
      // Views of the batch's keys: read before the next batch writes over them.
      const keys = Array.from({ length: records }, (_, i) => this.keys.subarray(i * KEY_BYTES, (i + 1) * KEY_BYTES));
      full.encoded = { rows: made.rows.take(keys, made.newId).rows, records };
      made.limit = Math.min(made.limit * 2, this.makeRows.maxRecords);
    }
    // A copy of its own (a view would take the whole buffer along when cloned), as a plain
    // Uint8Array: a Buffer arrives as one anyway.
    full.keys = new Uint8Array(this.keys.subarray(0, (full.values.length / WIDTH) * KEY_BYTES));
    this.batch = BatchBuilder.empty(full.start + full.count);
    this.inputBytes = 0;
    if (this.sentWords.size > MAX_SENT_WORDS) this.sentWords.clear();
    return full;
  }
}

/** The record whose fields start at `o` (writer side): one literal, so every record has the same shape. */
function recordAt(v: unknown[], o: number, key: Buffer): NormalisedRecord {
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
    search_text: v[o + 14] as string,
    email_domain_rev: v[o + 15] as string | null,
    severity: v[o + 16] as RecordSeverity,
    password_ntlm: v[o + 17] as string | null,
    key,
  };
}

/** An item of a batch as the writer takes it. */
export interface BatchItem {
  index: number;
  result: RecordResult;
  bytes: number;
  pause: boolean;
  words?: readonly string[];
}

/**
 * Each item of a batch as the writer takes it: its index, result and bytes of input, the batch's
 * words on the first (see IngestItem.words), and with `pauseAtEnd`, `pause` on the last (see LeaksService.ingest). One array for the batch: the ingest
 * takes it whole, without a promise per item.
 */
export function batchItems(b: ReaderBatch, pauseAtEnd = false): BatchItem[] {
  const items = new Array<BatchItem>(b.count);
  let rejected = 0;
  let o = 0;
  let k = 0;
  // Buffer views of the batch's keys, as the database driver binds them.
  const keys = Buffer.from(b.keys.buffer, b.keys.byteOffset, b.keys.byteLength);
  for (let i = 0; i < b.count; i++) {
    const pause = pauseAtEnd && i === b.count - 1;
    const index = b.lines ? (b.lines[i] as number) : b.start + i;
    const next = b.rejected[rejected];
    if (next !== undefined && next[0] === i) {
      rejected++;
      items[i] = { index, result: { ok: false, errors: next[1] }, bytes: b.bytes[i] as number, pause };
      continue;
    }
    items[i] = { index, result: { ok: true, record: recordAt(b.values, o, keys.subarray(k, k + KEY_BYTES)) }, bytes: b.bytes[i] as number, pause };
    o += WIDTH;
    k += KEY_BYTES;
  }
  if (b.count && b.words.length) (items[0] as BatchItem).words = b.words;
  return items;
}

/** A batch's items as the writer takes them: see batchItems, and for a batch made into rows, encodedItems. */
export function readerItems(b: ReaderBatch, pauseAtEnd = false): IngestItem[] {
  return b.encoded ? encodedItems(b, b.encoded) : batchItems(b, pauseAtEnd);
}

/** A batch made into rows: its rejected items, then one item for its valid records (see IngestItem.encoded), with the batch's words. */
function encodedItems(b: ReaderBatch, encoded: NonNullable<ReaderBatch['encoded']>): IngestItem[] {
  const items: IngestItem[] = [];
  let validBytes = 0;
  let rejected = 0;
  for (let i = 0; i < b.count; i++) {
    const next = b.rejected[rejected];
    if (next !== undefined && next[0] === i) {
      rejected++;
      items.push({ index: b.lines ? (b.lines[i] as number) : b.start + i, result: { ok: false, errors: next[1] }, bytes: b.bytes[i] as number });
    } else {
      validBytes += b.bytes[i] as number;
    }
  }
  items.push({ index: b.start, encoded, bytes: validBytes, ...(b.words.length ? { words: b.words } : {}) });
  return items;
}
