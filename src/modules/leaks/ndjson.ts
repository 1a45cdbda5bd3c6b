import type { Readable } from 'node:stream';
import { AppError } from '../../http/errors.js';
import { NdjsonLines } from './ndjson-lines.js';

export { MalformedLine, recordResult } from './ndjson-lines.js';

/**
 * NDJSON records as they arrive: one per non-blank line, numbered from 0, never buffering more
 * than a chunk and a line. Past `limit` bytes: 413, after the batches already stored.
 */
export async function* ndjsonItems(stream: Readable, limit = Number.POSITIVE_INFINITY): AsyncGenerator<{ index: number; value: unknown }> {
  let bytes = 0;
  let index = 0;
  const lines = new NdjsonLines();
  for await (const chunk of stream) {
    bytes += (chunk as Buffer).length;
    if (bytes > limit) {
      throw new AppError('payload_too_large', 413, `Request body is too large: NDJSON ingestion takes at most ${limit} bytes per request; records before the limit were stored.`);
    }
    for (const value of lines.push(chunk as Buffer)) yield { index: index++, value };
  }
  for (const value of lines.end()) yield { index: index++, value };
}
