import { Unzip, UnzipInflate } from 'fflate';
import { ApiError, CONSOLE_HEADERS, type Ok, type Problem, renewSession } from '../api/client';

export type IngestResult = Ok<'/api/v1/leaks/sources/{id}/records/', 'post'>;
/** What one request may carry (the API's limit); a bigger file is for `threatmon import-leaks`. */
export const UPLOAD_LIMIT = 64 * 1024 * 1024;

export interface Part {
  name: string;
  body: Blob;
  type: string;
}

export class TooBig extends Error {}

function typeOf(name: string): string {
  const lower = name.toLowerCase();
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'application/x-ndjson';
  if (lower.endsWith('.json')) return 'application/json';
  if (lower.endsWith('.csv')) return 'text/csv';
  return 'text/plain';
}

/** A stream's bytes up to the limit; past it, TooBig (a compressed bomb stops here, not in memory). */
async function capped(stream: ReadableStream<Uint8Array>, name: string): Promise<Blob> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > UPLOAD_LIMIT) {
      await reader.cancel();
      throw new TooBig(`${name} expands past 64 MiB: load it with \`threatmon import-leaks\` instead.`);
    }
    chunks.push(value);
  }
  return new Blob(chunks as BlobPart[]);
}

/** The zip's members, each inflated up to the limit. */
function unzipMembers(file: File): Promise<Part[]> {
  return new Promise((resolve, reject) => {
    const parts: Part[] = [];
    const pending: Array<Promise<void>> = [];
    const unzip = new Unzip((member) => {
      if (member.name.endsWith('/')) return;
      pending.push(
        new Promise<void>((done, fail) => {
          const chunks: Uint8Array[] = [];
          let size = 0;
          member.ondata = (err, chunk, final) => {
            if (err) return fail(err);
            size += chunk.byteLength;
            if (size > UPLOAD_LIMIT) {
              member.terminate();
              return fail(new TooBig(`${member.name} expands past 64 MiB: load it with \`threatmon import-leaks\` instead.`));
            }
            chunks.push(chunk);
            if (final) {
              parts.push({ name: member.name, body: new Blob(chunks as BlobPart[]), type: typeOf(member.name) });
              done();
            }
          };
          member.start();
        }),
      );
    });
    unzip.register(UnzipInflate);
    const reader = file.stream().getReader();
    const pump = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        unzip.push(value ?? new Uint8Array(0), done);
        if (done) break;
      }
      await Promise.all(pending);
      resolve(parts);
    };
    pump().catch(reject);
  });
}

/** A file as the parts to send: a .gz opened, a .zip's members each on its own, the rest as it is. */
export async function partsOf(file: File): Promise<Part[]> {
  const lower = file.name.toLowerCase();
  if (lower.endsWith('.gz')) {
    const inner = file.name.slice(0, -3);
    return [{ name: inner, body: await capped(file.stream().pipeThrough(new DecompressionStream('gzip')), file.name), type: typeOf(inner) }];
  }
  if (lower.endsWith('.zip')) return unzipMembers(file);
  if (file.size > UPLOAD_LIMIT) throw new TooBig(`${file.name} is over 64 MiB: load it with \`threatmon import-leaks\` instead.`);
  return [{ name: file.name, body: file, type: typeOf(file.name) }];
}

/**
 * One part sent with XMLHttpRequest, whose upload events give the progress bar (fetch has none).
 * The session cookie goes with it; an expired access cookie is renewed once.
 */
export function sendPart(source: string, part: Part, query: string, onProgress: (sent: number) => void, retried = false): Promise<IngestResult> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/leaks/sources/${encodeURIComponent(source)}/records/${query}`);
    for (const [k, v] of Object.entries(CONSOLE_HEADERS)) xhr.setRequestHeader(k, v);
    xhr.setRequestHeader('Content-Type', part.type);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onerror = () => reject(new Error('the connection failed'));
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status === 200) return resolve(body as IngestResult);
      if (xhr.status === 401 && !retried) {
        void renewSession().then((ok) => (ok ? sendPart(source, part, query, onProgress, true).then(resolve, reject) : reject(new ApiError(401, body as Problem))));
        return;
      }
      reject(new ApiError(xhr.status, (body ?? { detail: `${xhr.status} ${xhr.statusText}`, status: xhr.status, title: xhr.statusText, code: 'error', type: 'about:blank', request_id: '' }) as Problem));
    };
    xhr.send(part.body);
  });
}
