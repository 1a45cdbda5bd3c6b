import type fs from 'node:fs';
import type { Transform } from 'node:stream';
import { RECORD_FIELDS } from '../domain/leak-record.js';

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

/**
 * The records of a CSV file (rows) or of a JSON array file (items) as they stream. NDJSON is split
 * by the reader thread itself (ndjson-lines.ts). The parsers load on first use, so a reader thread
 * for NDJSON starts without them.
 */
export async function* readItems(stream: fs.ReadStream, format: 'csv' | 'json'): AsyncGenerator<{ index: number; value: unknown }> {
  if (format === 'csv') {
    const { parse: parseCsv } = await import('csv-parse');
    let index = 0;
    const rows = stream.pipe(parseCsv({ columns: true, skip_empty_lines: true, relax_column_count: true, bom: true, trim: false }));
    for await (const row of rows) yield { index: index++, value: csvRowToRecord(row as Record<string, string>) };
    return;
  }
  // A JSON array of any size, parsed as it streams.
  const { default: StreamArray } = await import('stream-json/streamers/StreamArray.js');
  const parser = StreamArray.withParser();
  stream.pipe(parser as unknown as Transform);
  for await (const { key, value } of parser as AsyncIterable<{ key: number; value: unknown }>) yield { index: key, value };
}
