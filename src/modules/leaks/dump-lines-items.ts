import type { Readable } from 'node:stream';
import { bestSeparator, detectLineFormat, DumpLines, type LineFormat, sampleLines, type Separator } from '../../domain/dump-lines.js';
import { Utf8Lines } from '../../domain/text-lines.js';
import { AppError } from '../../http/errors.js';
import type { IngestItem } from './leaks.ingest.js';
import { lineResult } from './ndjson-lines.js';

/** What the first lines are sampled from when the format is not given. */
const SAMPLE_BYTES = 64 * 1024;

/**
 * A text/plain body of combolist or stealer-log lines as ingest items: each line numbered from 1 (its
 * index), decoded as the CLI decodes files (UTF-8, UTF-16 with a BOM, Windows-1252 lines), blank and
 * `#` lines skipped, an unreadable line rejected with its reason. The format and separator are those
 * given, else detected from the first 64 KiB. Past `limit` bytes: 413, as an NDJSON stream.
 */
export async function* dumpLineItems(stream: Readable, options: { format?: LineFormat; separator?: Separator; limit: number }): AsyncGenerator<IngestItem> {
  const utf8 = new Utf8Lines();
  let bytes = 0;
  // The first SAMPLE_BYTES are held until the format is told from them.
  let sample: string | null = '';
  let lines: DumpLines | null = null;
  const open = (text: string) => {
    const sampled = sampleLines(text).slice(0, 200);
    const format = options.format ?? detectLineFormat(sampled)?.format;
    if (!format) throw new AppError('validation_error', 400, 'body: cannot tell combolist from stealer-log lines: pass ?format=combo or ?format=stealer', { errors: [{ field: 'body', message: 'not combolist or stealer-log lines' }] });
    return new DumpLines(format, options.separator ?? bestSeparator(format, sampled).separator);
  };
  function* items(reader: DumpLines, text: string, final: boolean): Generator<IngestItem> {
    for (const l of reader.push(text, final)) yield { index: l.line, result: lineResult(l.parsed), bytes: l.bytes };
  }
  for await (const chunk of stream) {
    const over = bytes + (chunk as Buffer).length - options.limit;
    bytes += (chunk as Buffer).length;
    const text = utf8.push(over > 0 ? (chunk as Buffer).subarray(0, (chunk as Buffer).length - over) : (chunk as Buffer)).toString('utf8');
    if (lines) {
      yield* items(lines, text, false);
    } else {
      sample = `${sample}${text}`;
      if (sample.length >= SAMPLE_BYTES || over > 0) {
        lines = open(sample);
        yield* items(lines, sample, false);
        sample = null;
      }
    }
    if (over > 0) throw new AppError('payload_too_large', 413, `Request body is too large: line ingestion takes at most ${options.limit} bytes per request.`);
  }
  const tail = utf8.end().toString('utf8');
  if (!lines) {
    const whole = `${sample ?? ''}${tail}`;
    if (whole.trim() === '') return;
    lines = open(`${whole}\n`);
    yield* items(lines, whole, true);
    return;
  }
  yield* items(lines, tail, true);
}
