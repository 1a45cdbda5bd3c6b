import type { LineResult } from '../../domain/dump-lines.js';
import { normaliseRecord, type RecordResult } from '../../domain/leak-record.js';

/**
 * NDJSON splitting with no dependency beyond the record normaliser, so the CLI's reader thread
 * loads in milliseconds (the HTTP error module pulls in the schema library).
 */

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

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return new MalformedLine('malformed JSON');
  }
}

const NEWLINE = 0x0a;

/**
 * The longest NDJSON line read: far past any valid record (50 `extra` values of 2,048 characters,
 * every one escaped as \uXXXX, is about 630 KB). A longer line is rejected as it streams, its bytes
 * counted and dropped, never held.
 */
export const MAX_NDJSON_LINE_BYTES = 1024 * 1024;

const TOO_LONG = new MalformedLine(`line longer than ${MAX_NDJSON_LINE_BYTES} bytes`);

/**
 * Splits NDJSON chunks into parsed values, synchronously, one chunk at a time: blank lines are
 * skipped, a line split across chunks is joined, lines are trimmed (a byte-order mark with them),
 * and invalid UTF-8 becomes U+FFFD. Lines are cut on the newline byte, which
 * never occurs inside a multi-byte UTF-8 character, and decoded one by one. Linear in the input, and
 * never holds more than MAX_NDJSON_LINE_BYTES of a line, whatever its length.
 */
export class NdjsonLines {
  /** The line begun, in the pieces it came in. */
  private rest: Buffer[] = [];
  private restBytes = 0;
  /** Bytes of the current line dropped past the limit (0: not past it). */
  private dropped = 0;

  /** The values of the complete lines this chunk ends; `sizes`, if given, gets each line's length in bytes. */
  push(chunk: Buffer, sizes?: number[]): unknown[] {
    const out: unknown[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, nl + 1), out, sizes);
      start = nl + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    return out;
  }

  /** The value of a last line with no newline after it, if any. */
  end(sizes?: number[]): unknown[] {
    const out: unknown[] = [];
    if (this.restBytes || this.dropped) this.take(Buffer.alloc(0), out, sizes);
    return out;
  }

  private hold(piece: Buffer): void {
    if (this.dropped) {
      this.dropped += piece.length;
      return;
    }
    if (this.restBytes + piece.length > MAX_NDJSON_LINE_BYTES) {
      this.dropped = this.restBytes + piece.length;
      this.rest = [];
      this.restBytes = 0;
      return;
    }
    // A copy: a view would keep the whole chunk it was cut from.
    this.rest.push(Buffer.from(piece));
    this.restBytes += piece.length;
  }

  /** A line ended by `piece` (its last part, with its newline if it has one). */
  private take(piece: Buffer, out: unknown[], sizes?: number[]): void {
    if (this.dropped || this.restBytes + piece.length > MAX_NDJSON_LINE_BYTES + 1) {
      sizes?.push(this.dropped + this.restBytes + piece.length);
      out.push(TOO_LONG);
    } else {
      const line = (this.restBytes ? Buffer.concat([...this.rest, piece]) : piece).toString('utf8').trim();
      if (line) {
        out.push(parseLine(line));
        sizes?.push(this.restBytes + piece.length);
      }
    }
    this.rest = [];
    this.restBytes = 0;
    this.dropped = 0;
  }
}
