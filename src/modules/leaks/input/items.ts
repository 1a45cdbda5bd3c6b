import type { LineResult } from '../../../domain/dump-lines.js';
import { normaliseRecord, type RecordResult } from '../../../domain/leak-record.js';
import type { EncodedRows } from '../leaks.copy-rows.js';

/**
 * One record to ingest: raw (`value`), or already normalised elsewhere (`result`, e.g. by the CLI's
 * reader thread, with the `bytes` of input it was read from; a `key` in it must be this source's).
 */
export type IngestItem =
  | { index: number; value: unknown; result?: undefined; bytes?: undefined; pause?: undefined; words?: undefined; encoded?: undefined }
  | {
      index: number;
      result: RecordResult;
      encoded?: undefined;
      value?: undefined;
      bytes?: number;
      /**
       * The last item its producer has ready (the CLI's reader thread, between batches): the batch
       * is written now, if it holds BATCH_SIZE records, rather than after waiting for more.
       */
      pause?: boolean;
      /**
       * With IngestOptions.wordsGiven: search words of this item's record and of those after it,
       * each given once by its producer (the CLI's reader thread, on its batches' first items).
       */
      words?: readonly string[];
    }
  | {
      /**
       * Records already made into COPY rows where they were read (the CLI's reader thread, on
       * PostgreSQL): `records` valid records of the input (a key repeated among them is one row),
       * stored as one batch as soon as taken.
       */
      index: number;
      encoded: { rows: EncodedRows; records: number };
      bytes: number;
      words?: readonly string[];
      result?: undefined;
      value?: undefined;
      pause?: undefined;
    };

/**
 * What an ingest reads: items one by one, or (a producer that has them in batches: an input
 * format, the CLI's reader thread) arrays of them, which skip the async iteration's promise per item.
 */
export type IngestItems = AsyncIterable<IngestItem | readonly IngestItem[]> | Iterable<IngestItem>;

/**
 * An item an input format read: its index (a line number from 1 for line formats, else its place
 * from 0), what it gives, the bytes of input it came from, and for a line its text (a rejected
 * line's text goes to `import-leaks --rejects`; one past the limit, its beginning).
 */
export interface InputItem {
  index: number;
  result: RecordResult;
  bytes: number;
  text?: string;
}

/** A line that is not JSON: reported as a rejection of its own, never the end of the stream. */
export class MalformedLine {
  constructor(readonly message: string) {}
}

/** A parsed item as a record result: a malformed line is rejected like an invalid record. */
export function recordResult(value: unknown): RecordResult {
  return value instanceof MalformedLine ? { ok: false, errors: [{ field: 'record', message: value.message }] } : normaliseRecord(value);
}

/** A combolist or stealer-log line as a record result: one that cannot be read is rejected with its reason. */
export function lineResult(parsed: LineResult): RecordResult {
  return parsed.ok ? normaliseRecord(parsed.record) : { ok: false, errors: [{ field: 'line', message: parsed.reason }] };
}
