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
 * Splits NDJSON chunks into parsed values, synchronously, one chunk at a time: blank lines are
 * skipped, a line split across chunks is joined, lines are trimmed (a byte-order mark with them),
 * and invalid UTF-8 becomes U+FFFD. Lines are cut on the newline byte, which
 * never occurs inside a multi-byte UTF-8 character, and decoded one by one.
 */
export class NdjsonLines {
  private rest: Buffer | null = null;

  /** The values of the complete lines this chunk ends; `sizes`, if given, gets each line's length in bytes. */
  push(chunk: Buffer, sizes?: number[]): unknown[] {
    const buf = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = null;
    const out: unknown[] = [];
    let start = 0;
    for (let nl = buf.indexOf(NEWLINE); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
      const line = buf.toString('utf8', start, nl).trim();
      if (line) {
        out.push(parseLine(line));
        sizes?.push(nl + 1 - start);
      }
      start = nl + 1;
    }
    if (start < buf.length) this.rest = Buffer.from(buf.subarray(start));
    return out;
  }

  /** The value of a last line with no newline after it, if any. */
  end(sizes?: number[]): unknown[] {
    const line = this.rest ? this.rest.toString('utf8').trim() : '';
    if (line) sizes?.push(this.rest?.length ?? 0);
    this.rest = null;
    return line ? [parseLine(line)] : [];
  }
}
