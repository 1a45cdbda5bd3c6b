import type { Readable } from 'node:stream';
import { bestSeparator, detectLineFormat, type LineFormat, parseLine, type Separator } from '../../domain/dump-lines.js';
import { Utf8Lines } from '../../domain/text-lines.js';
import { AppError } from '../../http/errors.js';
import type { IngestItem } from './leaks.ingest.js';
import { recordResult } from './ndjson-lines.js';

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
  let lineNo = 0;
  let carry = '';
  let sample = '';
  let pending: string[] | null = [];
  let chosen: { format: LineFormat; separator: Separator } | null = null;
  const choose = () => {
    const lines = sample.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)).filter((l) => l.trim() !== '' && !l.startsWith('#'));
    const format = options.format ?? detectLineFormat(lines.slice(0, 200))?.format;
    if (!format) throw new AppError('validation_error', 400, 'body: cannot tell combolist from stealer-log lines: pass ?format=combo or ?format=stealer', { errors: [{ field: 'body', message: 'not combolist or stealer-log lines' }] });
    chosen = { format, separator: options.separator ?? bestSeparator(format, lines.slice(0, 200)).separator };
  };
  function* items(text: string, final: boolean): Generator<IngestItem> {
    const lines = (carry + text).split('\n');
    carry = final ? '' : (lines.pop() as string);
    const { format, separator } = chosen as unknown as { format: LineFormat; separator: Separator };
    for (const raw of lines) {
      lineNo++;
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '' || line.startsWith('#')) continue;
      const parsed = parseLine(format, line, separator);
      yield { index: lineNo, result: parsed.ok ? recordResult(parsed.record) : { ok: false, errors: [{ field: 'line', message: parsed.reason }] }, bytes: Buffer.byteLength(raw) + 1 };
    }
  }
  for await (const chunk of stream) {
    const over = bytes + (chunk as Buffer).length - options.limit;
    bytes += (chunk as Buffer).length;
    const text = utf8.push(over > 0 ? (chunk as Buffer).subarray(0, (chunk as Buffer).length - over) : (chunk as Buffer)).toString('utf8');
    if (pending) {
      // Held until there is enough to tell the format by.
      pending.push(text);
      sample += text;
      if (sample.length < SAMPLE_BYTES && over <= 0) continue;
      choose();
      const held = pending.join('');
      pending = null;
      yield* items(held, false);
    } else {
      yield* items(text, false);
    }
    if (over > 0) throw new AppError('payload_too_large', 413, `Request body is too large: line ingestion takes at most ${options.limit} bytes per request.`);
  }
  const tail = utf8.end().toString('utf8');
  if (pending) {
    sample += tail;
    if (sample.trim() === '') return;
    choose();
    yield* items(pending.join('') + tail, true);
    return;
  }
  yield* items(tail, true);
}
