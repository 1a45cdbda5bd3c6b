import { type Kysely, sql } from 'kysely';
import type { CorpusShards } from '../../db/corpus-shards.js';
import { idInSlot, recordSlot, SLOTS } from '../../db/corpus-slots.js';
import { copyStraight } from '../../db/copy-straight.js';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import type { NormalisedRecord } from '../../domain/leak-record.js';
import { allSettledOrThrow } from '../../domain/promises.js';
import { CorpusTally } from './leaks.counters.js';
import { type CopyValue, copyValueRoom, eachKeyOnce, keyOrder, RECORD_COLUMNS, recordValues, writeCopyValue } from './leaks.record-rows.js';

/**
 * A batch's rows in COPY's text format, made once, where its records are: on the writer for an
 * API ingest, on the CLI's reader thread for an import (the writer then only forwards the bytes).
 */
export interface EncodedRows {
  /** The rows (RECORD_COLUMNS): each key once (its first record), by slot when slotted, then by key. */
  copy: Uint8Array;
  /** Their ids, in the same order: handed out in key order, so the primary key grows at its right edge. */
  ids: string[];
  /** Slotted (corpus shards): per slot (SLOTS, in hex order), where its rows end in `ids` and in `copy`. */
  slotEnds?: { rows: number[]; bytes: number[] };
  /**
   * The counter changes of storing every row (counterDeltas, domainDeltas): the reader counts them
   * beside the bytes, and they hold when every row was new (else the rows stored are read back).
   * None when a record of the batch repeated another (the writer counts what was stored).
   */
  counts?: { corpus: Array<[string, number]>; domains: Array<[string, number]> };
  /**
   * The rows' search texts, one after the other with a space between (one string to hand over, not
   * one a row), whose words the writer adds to leak_words: the reader thread is the import's
   * busiest, the writer forwarding bytes has time to look them up (hashed in place, see WordHashes).
   */
  words?: string;
}

/** Batches of a source written through the staging table after a direct COPY met a stored key (see CorpusCopies). */
export const DIRECT_COPY_PAUSE = 16;

/**
 * The rows of `records` (their keys in `keys`) as EncodedRows, and `order`: the record each row
 * is of. A key repeated in the batch is stored once, as its first record.
 */
export function encodeRows(
  records: readonly NormalisedRecord[],
  keys: readonly Uint8Array[],
  newId: () => string,
  sourceId: string,
  at: string,
  slotted: boolean,
): { rows: EncodedRows; order: number[] } {
  const rows = new RowsInProgress({ sourceId, at, slotted });
  records.forEach((r, i) => rows.add(r, keys[i] as Uint8Array));
  return rows.take(keys, newId);
}

/** Bytes of a UUID as text. */
const ID_BYTES = 36;

/**
 * A batch's rows made record by record as the records come: each record's row but its id (the
 * columns after it, in COPY text) is written at once into one buffer, so the import's reader keeps
 * bytes rather than record objects until the batch is cut; then the ids are handed out in key order
 * and the rows put in order (see EncodedRows). With `counting`, the counter changes and search texts
 * go along (EncodedRows.counts, words), tallied as the records come.
 */
export class RowsInProgress {
  private tails = Buffer.allocUnsafe(256 * 1024);
  // Set by reset().
  private used!: number;
  /** Where each record's row ends in `tails`. */
  private ends!: number[];
  /** Each record's slot (slotted), as a number. */
  private slots!: number[];
  private texts!: string[];
  private corpus?: CorpusTally;
  private domains!: Map<string, number>;

  constructor(private readonly o: { sourceId: string; at: string; slotted: boolean; counting?: { breachDate: string | null } }) {
    this.reset();
  }

  /** Empty again (`tails` kept: its bytes are written over). */
  private reset(): void {
    this.used = 0;
    this.ends = [];
    this.slots = [];
    this.texts = [];
    this.domains = new Map();
    if (this.o.counting) this.corpus = new CorpusTally(this.o.counting.breachDate);
  }

  get count(): number {
    return this.ends.length;
  }

  /** Adds a record with its key, used at once (a view of a buffer written over later will do). */
  add(r: NormalisedRecord, key: Uint8Array): void {
    const values = recordValues(r, '', this.o.sourceId, this.o.at, key);
    for (let c = 1; c < values.length; c++) {
      const v = values[c] as CopyValue;
      const most = copyValueRoom(v);
      if (this.used + most > this.tails.length) {
        const grown = Buffer.allocUnsafe(Math.max(this.tails.length * 2, this.used + most));
        this.tails.copy(grown, 0, 0, this.used);
        this.tails = grown;
      }
      this.tails[this.used++] = 0x09;
      this.used = writeCopyValue(this.tails, this.used, v);
    }
    this.tails[this.used++] = 0x0a;
    this.ends.push(this.used);
    if (this.o.slotted) this.slots.push(Number.parseInt(recordSlot(r, key), 16));
    if (this.corpus) {
      this.corpus.add(r);
      if (r.domain_rev) this.domains.set(r.domain_rev, (this.domains.get(r.domain_rev) ?? 0) + 1);
      this.texts.push(r.search_text);
    }
  }

  /** The rows of the records added (`keys`: theirs, in the order added), and the record each row is of; starts again empty. */
  take(keys: readonly Uint8Array[], newId: () => string): { rows: EncodedRows; order: number[] } {
    const inKeyOrder = keyOrder(keys);
    const once = eachKeyOnce(keys as Uint8Array[], inKeyOrder);
    const ids = new Array<string>(keys.length);
    // Every record takes an id, a repeat too, as a row-by-row insert hands them out: the same
    // records get the same ids whichever way they are written.
    for (const i of inKeyOrder) ids[i] = newId();
    // Each slot's rows together, in key order within it (a stable grouping of the key order).
    const groups: number[][] = this.o.slotted ? Array.from({ length: SLOTS }, () => []) : [once];
    if (this.o.slotted) {
      for (const i of once) {
        const slot = this.slots[i] as number;
        ids[i] = idInSlot(ids[i] as string, slot.toString(16));
        (groups[slot] as number[]).push(i);
      }
    }
    const order = this.o.slotted ? groups.flat() : once;
    const start = (i: number) => (i ? (this.ends[i - 1] as number) : 0);
    let bytes = 0;
    for (const i of order) bytes += ID_BYTES + (this.ends[i] as number) - start(i);
    // A buffer of its own (not a slice of Node's pool): a reader thread hands it over to the writer.
    const copy = Buffer.allocUnsafeSlow(bytes);
    const rowEnds: number[] = [];
    const byteEnds: number[] = [];
    let o = 0;
    let row = 0;
    for (const group of groups) {
      for (const i of group) {
        o += copy.write(ids[i] as string, o, 'latin1');
        o += this.tails.copy(copy, o, start(i), this.ends[i]);
      }
      row += group.length;
      rowEnds.push(row);
      byteEnds.push(o);
    }
    const rows: EncodedRows = { copy: new Uint8Array(copy.buffer, 0, bytes), ids: order.map((i) => ids[i] as string) };
    if (this.o.slotted) rows.slotEnds = { rows: rowEnds, bytes: byteEnds };
    // The counts hold for the rows when no record repeated another (then the writer reads the stored rows back).
    if (this.corpus && once.length === keys.length) rows.counts = { corpus: [...this.corpus.deltas(1)], domains: [...this.domains] };
    if (this.corpus) rows.words = order.map((i) => this.texts[i] as string).join(' ');
    this.reset();
    return { rows, order };
  }
}

/**
 * PostgreSQL: EncodedRows into leak_records, on one server or over the corpus shards. First tried:
 * COPY straight into leak_records inside a savepoint: a key already stored fails it
 * (unique_violation), and nothing of it stays. Then, and for the next DIRECT_COPY_PAUSE batches of
 * that source (a file imported again repeats every key): COPY into a staging table (no indexes),
 * then one INSERT ... SELECT of it in key order that skips the keys already stored, the same rule
 * as a row-by-row insert. The first writes each row once and sorts nothing: a bulk load of new
 * records spent half its database time in the second.
 */
export class CorpusCopies {
  /** Per source: how many more batches are written through the staging table. */
  private readonly paused = new Map<string, number>();

  constructor(private readonly database: Database) {}

  /** Writes `rows` in `trx` (on shards: in its shards' part, see ShardBatch); returns the ids of the rows that were new. */
  async write(trx: Kysely<DB>, sourceId: string, rows: EncodedRows): Promise<string[]> {
    if (rows.ids.length === 0) return [];
    const shards = this.database.corpusShards;
    return shards ? this.toShards(shards, trx, sourceId, rows) : this.toOneServer(trx, sourceId, rows);
  }

  /** Whether the next batch of a source goes straight into leak_records; counts a pause down. */
  private direct(sourceId: string): boolean {
    const pause = this.paused.get(sourceId) ?? 0;
    if (pause === 0) return true;
    if (pause === 1) this.paused.delete(sourceId);
    else this.paused.set(sourceId, pause - 1);
    return false;
  }

  private async toOneServer(trx: Kysely<DB>, sourceId: string, rows: EncodedRows): Promise<string[]> {
    const copyFrom = this.database.copyFrom;
    if (!copyFrom) throw new Error('COPY is for PostgreSQL');
    const columns = RECORD_COLUMNS.join(', ');
    if (this.direct(sourceId)) {
      const straight = () => copyFrom(trx, `copy leak_records (${columns}) from stdin`, [asBuffer(rows.copy)]);
      if (await copyStraight((statement) => sql.raw(statement).execute(trx), straight)) return rows.ids;
      this.paused.set(sourceId, DIRECT_COPY_PAUSE);
    }
    const refs = sql.join(RECORD_COLUMNS.map((c) => sql.ref(c)));
    await sql`create temporary table if not exists leak_records_incoming as select ${refs} from leak_records with no data`.execute(trx);
    await copyFrom(trx, `copy leak_records_incoming (${columns}) from stdin`, [asBuffer(rows.copy)]);
    const { rows: returned } = await sql<{ id: string }>`insert into leak_records (${refs}) select ${refs} from leak_records_incoming order by fingerprint, id
      on conflict (fingerprint) do nothing returning id`.execute(trx);
    // Emptied by TRUNCATE, not DELETE: no vacuum visits a temporary table, so deleted rows would
    // stay in it and every later batch would read past them.
    await sql`truncate leak_records_incoming`.execute(trx);
    return returned.map((r) => r.id);
  }

  /** Each shard's rows (the slots it holds) COPYed to it, all shards at once, in the shards' part of `trx`. */
  private async toShards(shards: CorpusShards, trx: Kysely<DB>, sourceId: string, rows: EncodedRows): Promise<string[]> {
    const ends = rows.slotEnds;
    if (!ends) throw new Error('rows for corpus shards are made slotted (see encodeRows)');
    const batch = await shards.batchFor(trx);
    const direct = this.direct(sourceId);
    const parts = new Map<number, { bytes: Uint8Array[]; ids: string[] }>();
    for (let s = 0; s < SLOTS; s++) {
      const [fromRow, toRow] = [s ? (ends.rows[s - 1] as number) : 0, ends.rows[s] as number];
      if (fromRow === toRow) continue;
      const position = shards.positionOf(s.toString(16));
      const part = parts.get(position) ?? { bytes: [], ids: [] };
      parts.set(position, part);
      part.bytes.push(asBuffer(rows.copy.subarray(s ? ends.bytes[s - 1] : 0, ends.bytes[s])));
      for (let r = fromRow; r < toRow; r++) part.ids.push(rows.ids[r] as string);
    }
    let metStoredKey = false;
    const written = await allSettledOrThrow(
      [...parts].map(async ([position, part]) => {
        // One chunk a shard, not one a slot: the COPY stream writes each chunk to the socket as two
        // writes of its own (its header, then the bytes).
        const chunk = part.bytes.length === 1 ? (part.bytes[0] as Uint8Array) : Buffer.concat(part.bytes);
        const returned = await batch.insert(position, RECORD_COLUMNS, () => [chunk], direct);
        if (direct && returned) metStoredKey = true;
        return returned ?? part.ids;
      }),
    );
    if (metStoredKey) this.paused.set(sourceId, DIRECT_COPY_PAUSE);
    return written.flat();
  }
}

/** A view of `bytes` as a Buffer, as the COPY stream takes its chunks (rows from a reader thread arrive as a Uint8Array). */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
