import type { Readable } from 'node:stream';
import { AppError } from '../../../http/errors.js';

/**
 * A body's chunks up to `limit` bytes: the chunk that passes it is cut there and handed on (the
 * lines that end within the limit are read like any other), then 413 naming `what`.
 */
export async function* within(stream: Readable, limit: number, what: string): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const over = bytes + chunk.length - limit;
    bytes += chunk.length;
    yield over > 0 ? chunk.subarray(0, chunk.length - over) : chunk;
    if (over > 0) throw new AppError('payload_too_large', 413, `Request body is too large: ${what} ingestion takes at most ${limit} bytes per request.`);
  }
}
