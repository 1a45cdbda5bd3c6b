import fs from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { detectLineFormat, type LineFormat, sampleLines, type Separator } from '../domain/dump-lines.js';
import { RECORD_FIELDS } from '../domain/leak-record.js';
import { Utf8Lines } from '../domain/text-lines.js';

export { Utf8Lines };

/**
 * A dump as it comes: a file, gzipped or not, or a zip of several (each member read in turn),
 * in UTF-8 (a BOM or none), UTF-16 with a BOM, or lines of Windows-1252 among UTF-8 ones. Everything
 * is handed on as UTF-8, a line at a time where it had to be mended, streamed: nothing is unpacked
 * to disk or held whole.
 */

export type ImportFormat = 'csv' | 'tsv' | 'ndjson' | 'json' | LineFormat;
export const IMPORT_FORMATS: readonly ImportFormat[] = ['combo', 'stealer', 'csv', 'tsv', 'ndjson', 'json'];

/** One file of the input: the file itself, or a member of a zip. */
export interface InputMember {
  name: string;
  chunks: AsyncIterable<Buffer>;
}

const GZIP = [0x1f, 0x8b];
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const startsWith = (b: Buffer, magic: number[]) => magic.every((m, i) => b[i] === m);

/** The first bytes of a stream, and the stream again from its start. */
export async function peek(chunks: AsyncIterable<Buffer>, bytes: number): Promise<{ head: Buffer; all: AsyncIterable<Buffer> }> {
  const it = chunks[Symbol.asyncIterator]();
  const taken: Buffer[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await it.next();
    if (next.done) {
      done = true;
      break;
    }
    taken.push(next.value);
    size += next.value.length;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* taken;
    if (done) return;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  }
  return { head: Buffer.concat(taken), all: all() };
}

/** Gunzips a gzipped stream (by its magic bytes, whatever its name), else hands it on. */
async function gunzipped(chunks: AsyncIterable<Buffer>): Promise<AsyncIterable<Buffer>> {
  const { head, all } = await peek(chunks, 2);
  if (!startsWith(head, GZIP)) return all;
  const gunzip = createGunzip();
  // A failure of either side ends the gunzip stream with it, so its reader sees the error.
  pipeline(Readable.from(all), gunzip, () => undefined);
  return gunzip;
}

/** The members of the input at `file`: a zip's files in order (directories left out), else the file. */
export async function* inputMembers(file: string): AsyncGenerator<InputMember> {
  // A zip is read by its directory, at its end: only a regular file can be one. A pipe is read once,
  // as it comes (opening it here would take it from its writer).
  const magic = Buffer.alloc(4);
  if ((await fs.promises.stat(file)).isFile()) {
    const fd = await fs.promises.open(file, 'r');
    try {
      await fd.read(magic, 0, 4, 0);
    } finally {
      await fd.close();
    }
  }
  if (startsWith(magic, ZIP)) {
    yield* zipMembers(file);
    return;
  }
  yield { name: file, chunks: await gunzipped(fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) };
}

async function* zipMembers(file: string): AsyncGenerator<InputMember> {
  const yauzl = await import('yauzl');
  const zip = await new Promise<import('yauzl').ZipFile>((resolve, reject) => yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, z) => (err ? reject(err) : resolve(z))));
  try {
    for (;;) {
      const entry = await new Promise<import('yauzl').Entry | null>((resolve, reject) => {
        const onEntry = (e: import('yauzl').Entry) => {
          zip.off('end', onEnd);
          zip.off('error', reject);
          resolve(e);
        };
        const onEnd = () => {
          zip.off('entry', onEntry);
          resolve(null);
        };
        zip.once('entry', onEntry);
        zip.once('end', onEnd);
        zip.once('error', reject);
        zip.readEntry();
      });
      if (!entry) return;
      if (entry.fileName.endsWith('/')) continue;
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
      yield { name: `${file}:${entry.fileName}`, chunks: await gunzipped(stream as AsyncIterable<Buffer>) };
    }
  } finally {
    zip.close();
  }
}

/** A stream of any encoding as UTF-8 cut at line ends (see Utf8Lines). */
export async function* utf8Chunks(chunks: AsyncIterable<Buffer>, lines: Utf8Lines): AsyncGenerator<Buffer> {
  for await (const c of chunks) {
    const out = lines.push(c);
    if (out.length) yield out;
  }
  const tail = lines.end();
  if (tail.length) yield tail;
}

/** What a member's first lines say it is: the format, and for line formats the separator. */
export interface Detected {
  format: ImportFormat;
  separator?: Separator;
}

/**
 * The format of a member from its first bytes (UTF-8 by now): a JSON array or NDJSON by their first
 * character, CSV or TSV by a header that names record fields, else combolist or stealer-log lines by
 * what most lines read as; null when none fits.
 */
export function detectFormat(head: string): Detected | null {
  const meaningful = sampleLines(head);
  const first = meaningful[0]?.trim();
  if (first === undefined) return null;
  if (first.startsWith('[')) return { format: 'json' };
  if (first.startsWith('{')) return { format: 'ndjson' };
  for (const [format, delimiter] of [['tsv', '\t'], ['csv', ',']] as const) {
    const columns = first.split(delimiter).map((c) => c.trim().replace(/^"|"$/g, '').toLowerCase());
    if (columns.length >= 2 && columns.some((c) => (RECORD_FIELDS as readonly string[]).includes(c))) return { format };
  }
  const lineFormat = detectLineFormat(meaningful.slice(0, 200));
  return lineFormat;
}
