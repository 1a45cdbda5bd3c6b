import type fs from 'node:fs';
import type { Transform } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import { RECORD_FIELDS } from '../domain/leak-record.js';
import { ndjsonItems } from '../modules/leaks/ndjson.js';

export type ImportFormat = 'csv' | 'ndjson' | 'json';

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

/** The records of a file as they stream: NDJSON lines, CSV rows, or the items of one JSON array. */
export async function* readItems(stream: fs.ReadStream, format: ImportFormat): AsyncGenerator<{ index: number; value: unknown }> {
  if (format === 'ndjson') {
    yield* ndjsonItems(stream);
    return;
  }
  if (format === 'csv') {
    let index = 0;
    const rows = stream.pipe(parseCsv({ columns: true, skip_empty_lines: true, relax_column_count: true, bom: true, trim: false }));
    for await (const row of rows) yield { index: index++, value: csvRowToRecord(row as Record<string, string>) };
    return;
  }
  // A JSON array of any size, parsed as it streams.
  const parser = StreamArray.withParser();
  stream.pipe(parser as unknown as Transform);
  for await (const { key, value } of parser as AsyncIterable<{ key: number; value: unknown }>) yield { index: key, value };
}

