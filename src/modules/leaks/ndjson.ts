import type { Readable } from 'node:stream';
import { AppError } from '../../http/errors.js';
import { NdjsonLines } from './ndjson-lines.js';

export { MalformedLine, recordResult } from './ndjson-lines.js';

/**
 * NDJSON records as they arrive: one per non-blank line, numbered from 0, never buffering more
 * than a chunk and a line. Past `limit` bytes: 413 (ingest() stores the records before it and says how many).
 */
export async function* ndjsonItems(stream: Readable, limit = Number.POSITIVE_INFINITY): AsyncGenerator<{ index: number; value: unknown }> {
  let bytes = 0;
  let index = 0;
  const lines = new NdjsonLines();
  for await (const chunk of stream) {
    const over = bytes + (chunk as Buffer).length - limit;
    bytes += (chunk as Buffer).length;
    // The lines that end within the limit are records like any other, even in the chunk that passes it.
    for (const value of lines.push(over > 0 ? (chunk as Buffer).subarray(0, (chunk as Buffer).length - over) : (chunk as Buffer))) yield { index: index++, value };
    if (over > 0) throw new AppError('payload_too_large', 413, `Request body is too large: NDJSON ingestion takes at most ${limit} bytes per request.`);
  }
  for (const value of lines.end()) yield { index: index++, value };
}
