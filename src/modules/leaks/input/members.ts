import fs from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Utf8Lines } from '../../../domain/text-lines.js';

/**
 * A dump as it comes: a file, gzipped or not, or a zip of several (each member read in turn),
 * in UTF-8 (a BOM or none), UTF-16 with a BOM, or lines of Windows-1252 among UTF-8 ones. Everything
 * is handed on as UTF-8, a line at a time where it had to be mended, streamed: nothing is unpacked
 * to disk or held whole.
 */

/** One file of the input: the file itself, or a member of a zip. */
export interface InputMember {
  name: string;
  chunks: AsyncIterable<Buffer>;
}

/**
 * How far compressed input may expand (`import-leaks --max-expansion-ratio`, `--max-expanded-size`):
 * a member past either is ended there with ExpansionLimit, the records read before it kept, and the
 * next member read. The ratio is judged once a member has given 16 MiB: small files may compress well.
 */
export interface ExpansionLimits {
  /** Bytes out per compressed byte in. */
  ratio: number;
  /** Bytes out of one member. */
  bytes: number;
}
export const DEFAULT_EXPANSION: ExpansionLimits = { ratio: 100, bytes: 64 * 1024 ** 3 };
const RATIO_AFTER = 16 * 1024 * 1024;

/** A compressed member that expands past the limits: a compressed bomb, or limits set too low. */
export class ExpansionLimit extends Error {
  constructor(member: string, expanded: number, why: 'ratio' | 'bytes', limits: ExpansionLimits) {
    super(
      why === 'ratio'
        ? `${member} expands more than ${limits.ratio} times its compressed size (a compressed bomb?): read stopped after ${expanded} bytes (--max-expansion-ratio raises the limit)`
        : `${member} expands past ${limits.bytes} bytes: read stopped there (--max-expanded-size raises the limit)`,
    );
    this.name = 'ExpansionLimit';
  }
}

/** Where the reading stands in the input file, in its own bytes (compressed ones for a compressed file). */
export interface ReadPosition {
  bytes: number;
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

/** The chunks a decompressor gives, ended with ExpansionLimit past the limits; `compressed()` says how many bytes went in so far. */
async function* limited(out: AsyncIterable<Buffer>, compressed: () => number, member: string, limits: ExpansionLimits): AsyncGenerator<Buffer> {
  let expanded = 0;
  for await (const chunk of out) {
    expanded += chunk.length;
    if (expanded > limits.bytes) throw new ExpansionLimit(member, expanded - chunk.length, 'bytes', limits);
    if (expanded > RATIO_AFTER && expanded > compressed() * limits.ratio) throw new ExpansionLimit(member, expanded - chunk.length, 'ratio', limits);
    yield chunk;
  }
}

/** Gunzips a gzipped stream (by its magic bytes, whatever its name) within the limits, else hands it on. */
async function gunzipped(chunks: AsyncIterable<Buffer>, member: string, limits: ExpansionLimits): Promise<AsyncIterable<Buffer>> {
  const { head, all } = await peek(chunks, 2);
  if (!startsWith(head, GZIP)) return all;
  let fed = 0;
  async function* counted() {
    for await (const c of all) {
      fed += c.length;
      yield c;
    }
  }
  const gunzip = createGunzip();
  // A failure of either side ends the gunzip stream with it, so its reader sees the error.
  pipeline(Readable.from(counted()), gunzip, () => undefined);
  return stopping(limited(gunzip, () => fed, member, limits), () => gunzip.destroy());
}

/** `chunks`, and `stop()` when their reader leaves them early (a member cut short): the streams behind them end. */
async function* stopping(chunks: AsyncIterable<Buffer>, stop: () => void): AsyncGenerator<Buffer> {
  try {
    yield* chunks;
  } finally {
    stop();
  }
}

/** The members of the input at `file`: a zip's files in order (directories left out), else the file. */
export async function* inputMembers(file: string, position: ReadPosition = { bytes: 0 }, limits: ExpansionLimits = DEFAULT_EXPANSION): AsyncGenerator<InputMember> {
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
    yield* zipMembers(file, position, limits);
    return;
  }
  async function* read() {
    for await (const c of fs.createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      position.bytes += c.length;
      yield c;
    }
  }
  yield { name: file, chunks: await gunzipped(read(), file, limits) };
}

async function* zipMembers(file: string, position: ReadPosition, limits: ExpansionLimits): AsyncGenerator<InputMember> {
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
      const stream = await new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
      const name = `${file}:${entry.fileName}`;
      // yauzl reads the member's compressed bytes as it inflates them: the share given out stands for the share read.
      const start = entry.relativeOffsetOfLocalHeader;
      let out = 0;
      const inflated = async function* () {
        for await (const c of stream as AsyncIterable<Buffer>) {
          out += c.length;
          position.bytes = start + Math.round(entry.compressedSize * Math.min(1, out / Math.max(1, entry.uncompressedSize)));
          yield c;
        }
      };
      const own = entry.compressionMethod === 0 ? inflated() : limited(inflated(), () => Math.max(1, entry.compressedSize * Math.min(1, out / Math.max(1, entry.uncompressedSize))), name, limits);
      yield { name, chunks: await gunzipped(stopping(own, () => stream.destroy()), name, limits) };
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
