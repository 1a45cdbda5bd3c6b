import type { Readable } from 'node:stream';
import { DumpLines, type LineFormat, type ReadLine, type Separator, UnknownLineFormat } from '../../domain/dump-lines.js';
import { Utf8Lines } from '../../domain/text-lines.js';
import { AppError } from '../../http/errors.js';
import type { IngestItem } from './leaks.ingest.js';
import { lineResult } from './ndjson-lines.js';

/**
 * A text/plain body of combolist or stealer-log lines as ingest items: each line numbered from 1 (its
 * index), decoded as the CLI decodes files (UTF-8, UTF-16 with a BOM, Windows-1252 lines), blank and
 * `#` lines skipped, an unreadable line rejected with its reason, a line past 4,096 characters
 * rejected as it streams. The format and separator are those given, else told from the first lines.
 * Past `limit` bytes: 413, as an NDJSON stream. When the body fails part-way (cut off, stalled, too
 * large), the whole lines read before are items first.
 */
export async function* dumpLineItems(stream: Readable, options: { format?: LineFormat; separator?: Separator; limit: number }): AsyncGenerator<IngestItem> {
  const utf8 = new Utf8Lines();
  const lines = new DumpLines(options.format, options.separator);
  let bytes = 0;
  try {
    try {
      for await (const chunk of stream) {
        const over = bytes + (chunk as Buffer).length - options.limit;
        bytes += (chunk as Buffer).length;
        const text = utf8.push(over > 0 ? (chunk as Buffer).subarray(0, (chunk as Buffer).length - over) : (chunk as Buffer)).toString('utf8');
        for (const l of lines.push(text)) yield { index: l.line, result: lineResult(l.parsed), bytes: l.bytes };
        if (over > 0) throw new AppError('payload_too_large', 413, `Request body is too large: line ingestion takes at most ${options.limit} bytes per request.`);
      }
    } catch (err) {
      // The lines held to tell the format by are items too, if it can be told from them.
      let drained: ReadLine[] = [];
      try {
        drained = [...lines.drain()];
      } catch (unknown) {
        if (!(unknown instanceof UnknownLineFormat)) throw unknown;
      }
      for (const l of drained) yield { index: l.line, result: lineResult(l.parsed), bytes: l.bytes };
      throw err;
    }
    for (const l of lines.push(utf8.end().toString('utf8'), true)) yield { index: l.line, result: lineResult(l.parsed), bytes: l.bytes };
  } catch (err) {
    if (err instanceof UnknownLineFormat) throw new AppError('validation_error', 400, 'body: cannot tell combolist from stealer-log lines: pass ?format=combo or ?format=stealer', { errors: [{ field: 'body', message: 'not combolist or stealer-log lines' }] });
    throw err;
  }
}
