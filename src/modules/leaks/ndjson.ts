import type { Readable } from 'node:stream';
import { normaliseRecord, type RecordResult } from '../../domain/leak-record.js';
import { AppError } from '../../http/errors.js';

/** A line that is not JSON: reported as a rejection of its own, never the end of the stream. */
export class MalformedLine {
  constructor(readonly message: string) {}
}

/** A parsed item as a record result: a malformed line is rejected like an invalid record. */
export function recordResult(value: unknown): RecordResult {
  return value instanceof MalformedLine ? { ok: false, errors: [{ field: 'record', message: value.message }] } : normaliseRecord(value);
}

/**
 * NDJSON records as they arrive: one per non-blank line, numbered from 0, never buffering more
 * than a line. Past `limit` bytes: 413, after the batches already stored.
 */
export async function* ndjsonItems(stream: Readable, limit = Number.POSITIVE_INFINITY): AsyncGenerator<{ index: number; value: unknown }> {
  let bytes = 0;
  let rest = '';
  let index = 0;
  const decoder = new TextDecoder('utf-8');
  const parse = (line: string) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return new MalformedLine('malformed JSON');
    }
  };
  for await (const chunk of stream) {
    bytes += (chunk as Buffer).length;
    if (bytes > limit) {
      throw new AppError('payload_too_large', 413, `Request body is too large: NDJSON ingestion takes at most ${limit} bytes per request; records before the limit were stored.`);
    }
    rest += decoder.decode(chunk as Buffer, { stream: true });
    let nl = rest.indexOf('\n');
    while (nl !== -1) {
      const line = rest.slice(0, nl).trim();
      rest = rest.slice(nl + 1);
      if (line) yield { index: index++, value: parse(line) };
      nl = rest.indexOf('\n');
    }
  }
  rest += decoder.decode();
  if (rest.trim()) yield { index: index++, value: parse(rest.trim()) };
}
