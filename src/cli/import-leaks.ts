import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { SingleBar } from 'cli-progress';
import { parse as parseCsv } from 'csv-parse';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import { RECORD_FIELDS } from '../domain/leak-record.js';
import type { IngestReport, LeaksService } from '../modules/leaks/leaks.service.js';
import { ndjsonItems } from '../modules/leaks/ndjson.js';

export type ImportFormat = 'csv' | 'ndjson' | 'json';

export class ImportError extends Error {}

export function detectFormat(file: string): ImportFormat {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.json') return 'json';
  throw new ImportError(`cannot tell the format of "${file}" from its extension: pass --format csv|ndjson|json`);
}

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

async function* items(stream: NodeJS.ReadableStream & fs.ReadStream, format: ImportFormat): AsyncGenerator<{ index: number; value: unknown }> {
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

export interface ImportOptions {
  file: string;
  source: string;
  format?: ImportFormat;
  createSource?: boolean;
  /** Where the progress and summary go (stderr by default). */
  out?: NodeJS.WriteStream;
  progress?: boolean;
}

/** `threatmon import-leaks`: the API's ingestion path, fed from a file of any size, with a progress bar. */
export async function importLeaks(leaks: LeaksService, opts: ImportOptions): Promise<IngestReport & { seconds: number }> {
  const out = opts.out ?? process.stderr;
  if (!fs.existsSync(opts.file)) throw new ImportError(`no such file: ${opts.file}`);
  const format = opts.format ?? detectFormat(opts.file);
  let source = await leaks.findSourceByName(opts.source);
  if (!source) {
    if (!opts.createSource) throw new ImportError(`no leak source named "${opts.source}": create it first, or pass --create-source`);
    source = await leaks.createSource({ p: null, ip: null }, { name: opts.source });
    out.write(`Created leak source "${opts.source}" (${source.id}).\n`);
  }
  const size = fs.statSync(opts.file).size;
  const stream = fs.createReadStream(opts.file, { highWaterMark: 1024 * 1024 });
  const started = Date.now();
  const showBar = opts.progress ?? Boolean(out.isTTY);
  const bar = showBar
    ? new SingleBar(
        {
          format: ' {bar} {percentage}% | {records} records | {rate} rec/s | ETA {eta_formatted} | accepted {accepted}, duplicates {duplicates}, rejected {rejected}',
          stream: out,
          hideCursor: true,
          etaBuffer: 50,
        },
        undefined,
      )
    : null;
  bar?.start(size, 0, { records: 0, rate: 0, accepted: 0, duplicates: 0, rejected: 0 });
  let lastLine = 0;
  const report = await leaks.ingest(source.id, items(stream, format), { p: null, ip: null }, (r, processed) => {
    const seconds = (Date.now() - started) / 1000;
    const rate = Math.round(processed / Math.max(seconds, 0.001));
    if (bar) {
      bar.update(stream.bytesRead, { records: processed, rate, accepted: r.accepted, duplicates: r.duplicates, rejected: r.rejected.length });
    } else if (Date.now() - lastLine > 5000) {
      // Not a terminal (CI, a log file): a line every few seconds instead of a bar.
      lastLine = Date.now();
      out.write(`${processed} records (${Math.round((stream.bytesRead / Math.max(size, 1)) * 100)}%), ${rate} rec/s\n`);
    }
  });
  bar?.update(size);
  bar?.stop();
  const seconds = (Date.now() - started) / 1000;
  const total = report.accepted + report.duplicates + report.rejected.length;
  out.write(
    `Imported ${opts.file} into "${opts.source}" in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))} records/s): ` +
      `${report.accepted} accepted, ${report.duplicates} duplicates, ${report.rejected.length} rejected` +
      `${report.alerts_raised ? `, ${report.alerts_raised} alerts raised` : ''}${report.exposures_found ? `, ${report.exposures_found} exposures found` : ''}.\n`,
  );
  for (const r of report.rejected.slice(0, 10)) {
    out.write(`  record ${r.index}: ${r.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}\n`);
  }
  if (report.rejected.length > 10) out.write(`  ... and ${report.rejected.length - 10} more rejected records\n`);
  return { ...report, seconds };
}
