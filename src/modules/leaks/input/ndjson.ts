import type { Readable } from 'node:stream';
import { type InputFormat, YIELD_EVERY } from './format.js';
import { type InputItem, MalformedLine, recordResult } from './items.js';
import { within } from './within.js';

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

/** NDJSON: one JSON record per line (blank lines skipped), numbered from 0. */
export const ndjson: InputFormat = {
  name: 'ndjson',
  title: 'NDJSON',
  numbered: false,
  recognise: (first) => (first.startsWith('{') ? {} : null),
  async *read(text) {
    // A chunk's lines are split in one synchronous pass, then normalised YIELD_EVERY at a time.
    const lines = new NdjsonLines();
    const sizes: number[] = [];
    let index = 0;
    async function* items(values: unknown[]) {
      for (let from = 0; from < values.length; from += YIELD_EVERY) {
        const to = Math.min(values.length, from + YIELD_EVERY);
        const out = new Array<InputItem>(to - from);
        for (let i = from; i < to; i++) out[i - from] = { index: index++, result: recordResult(values[i]), bytes: sizes[i] as number };
        yield out;
      }
    }
    for await (const chunk of text) {
      sizes.length = 0;
      yield* items(lines.push(chunk, sizes));
    }
    sizes.length = 0;
    yield* items(lines.end(sizes));
  },
};

/**
 * An NDJSON body as it arrives (the API's door): one raw record per non-blank line, numbered from 0,
 * never buffering more than a chunk and a line. Past `limit` bytes: 413 (ingest() stores the records
 * before it and says how many).
 */
export async function* ndjsonItems(stream: Readable, limit = Number.POSITIVE_INFINITY): AsyncGenerator<{ index: number; value: unknown }> {
  let index = 0;
  const lines = new NdjsonLines();
  for await (const chunk of within(stream, limit, 'NDJSON')) for (const value of lines.push(chunk)) yield { index: index++, value };
  for (const value of lines.end()) yield { index: index++, value };
}
