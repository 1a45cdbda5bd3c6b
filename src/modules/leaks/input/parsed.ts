import { once } from 'node:events';
import { type Duplex, Readable } from 'node:stream';
import { RECORD_FIELDS } from '../../../domain/leak-record.js';
import type { ReadOptions } from './format.js';
import { type InputItem, recordResult } from './items.js';
import { MAX_NDJSON_LINE_BYTES } from './ndjson.js';

/** What `parsed` uses of a parser: a writable stream that emits its items as data. */
export type Parser = Pick<Duplex, 'on' | 'write' | 'end' | 'destroy'> & NodeJS.EventEmitter;

/** A CSV row as a record: known columns map to fields, any other non-empty column goes to `extra`. */
export function csvRowToRecord(row: Record<string, string>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  const extra: Record<string, string> = {};
  for (const [column, raw] of Object.entries(row)) {
    const value = raw?.trim();
    if (!value) continue;
    const key = column.trim().toLowerCase();
    if ((RECORD_FIELDS as readonly string[]).includes(key) && key !== 'extra') record[key] = value;
    else extra[column.trim()] = value;
  }
  if (Object.keys(extra).length) record.extra = extra;
  return record;
}

/**
 * The records of a CSV file (rows) or of a JSON array file (items) as they stream. NDJSON is split
 * by its own format (ndjson.ts). The parsers load on first use, so a reader thread
 * for NDJSON starts without them.
 */
export async function* readItems(
  stream: Readable,
  format: 'csv' | 'tsv' | 'json',
  options: Pick<ReadOptions, 'columns'> = {},
): AsyncGenerator<{ index: number; value: unknown }> {
  if (format === 'csv' || format === 'tsv') {
    const { parse: parseCsv } = await import('csv-parse');
    let index = 0;
    // A header names the columns, unless they are given (a headerless dump: --columns).
    const rows = parseCsv({
      columns: options.columns ? [...options.columns] : true,
      delimiter: format === 'tsv' ? '\t' : ',',
      skip_empty_lines: true,
      relax_column_count: true,
      relax_quotes: format === 'tsv',
      quote: format === 'tsv' ? false : '"',
      bom: true,
      trim: false,
    });
    for await (const row of parsed<Record<string, string>>(stream, rows)) yield { index: index++, value: csvRowToRecord(row) };
    return;
  }
  // A JSON array of any size, parsed as it streams.
  const { default: StreamArray } = await import('stream-json/streamers/StreamArray.js');
  for await (const { key, value } of parsed<{ key: number; value: unknown }>(stream, StreamArray.withParser())) yield { index: key, value };
}

/** Items parsed and not yet taken from which the input stops being read (see parsed). */
const MAX_WAITING_ITEMS = 1000;

/**
 * What `parser` makes of `input`, item by item, then its error if it fails: every item parsed
 * before the error comes first. A parser's own async iterator (or one paused for backpressure)
 * drops what it holds when it fails: a JSON array broken after its 3,000th item, read in one
 * chunk, gave none of them, and the import could not say where the file was broken. So the
 * parser is never paused: its items go to a queue as it makes them, and the input is fed to it a
 * chunk at a time, only while fewer than MAX_WAITING_ITEMS wait (memory: that many items and one
 * chunk's).
 */
export async function* parsed<T>(input: Readable, parser: Parser): AsyncGenerator<T> {
  const waiting: T[] = [];
  let failure: unknown = null;
  let ended = false;
  // The reader waits for items (wake), the feeder for room to put more (room).
  const waits: { wake?: () => void; room?: () => void } = {};
  const notify = () => {
    waits.wake?.();
    waits.wake = undefined;
  };
  const makeRoom = () => {
    waits.room?.();
    waits.room = undefined;
  };
  const fail = (err: unknown) => {
    failure ??= err;
    notify();
  };
  parser.on('data', (item: T) => {
    waiting.push(item);
    notify();
  });
  // Not once: a parser made of a chain of streams can report one failure twice.
  parser.on('error', fail);
  parser.on('end', () => {
    ended = true;
    notify();
  });
  // Ends a wait for 'drain' when the reader stops: a destroyed parser never emits it.
  const stopped = new AbortController();
  const feeding = (async () => {
    for await (const chunk of input) {
      if (failure) return;
      if (!parser.write(chunk)) await once(parser, 'drain', { signal: stopped.signal });
      while (waiting.length >= MAX_WAITING_ITEMS && !failure) await new Promise<void>((resolve) => (waits.room = resolve));
    }
    parser.end();
  })().catch(fail);
  try {
    for (;;) {
      if (waiting.length) {
        const items = waiting.splice(0);
        makeRoom();
        yield* items;
      } else if (failure) {
        throw failure;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => (waits.wake = resolve));
      }
    }
  } finally {
    // Also when the reader stops early: the feeder ends, the file is closed.
    failure ??= new Error('stopped');
    makeRoom();
    stopped.abort();
    input.destroy();
    parser.destroy();
    await feeding;
  }
}

/** The longest CSV row or JSON array item read (as MAX_NDJSON_LINE_BYTES): its parser holds it whole. */
export const MAX_ITEM_BYTES = MAX_NDJSON_LINE_BYTES;

/**
 * The items of a CSV, TSV or JSON array member, each normalised: an item's bytes are those read
 * since the item before; one past MAX_ITEM_BYTES ends the member there (every item before it given).
 */
export async function* parsedItems(text: AsyncIterable<Buffer>, format: 'csv' | 'tsv' | 'json', options: ReadOptions): AsyncGenerator<InputItem[]> {
  let read = 0;
  let counted = 0;
  async function* counting() {
    for await (const c of text) {
      read += c.length;
      if (read - counted > MAX_ITEM_BYTES) throw new Error(`a record longer than ${MAX_ITEM_BYTES} bytes`);
      yield c;
    }
  }
  for await (const { index, value } of readItems(Readable.from(counting()), format, options)) {
    const bytes = read - counted;
    counted = read;
    yield [{ index, result: recordResult(value), bytes }];
  }
}
