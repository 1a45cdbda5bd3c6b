/**
 * The generated corpus's files (bench/generate-leaks.ts): one NDJSON file per source, plain or
 * gzipped (`--gzip`: 100 million records take 2.4 GB instead of 11.5 GB).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/** The corpus files of `dir`, in source order. */
export function corpusFiles(dir) {
  return fs.readdirSync(dir).filter((f) => /\.ndjson(\.gz)?$/.test(f)).sort();
}

/** A file's source name: `source-07.ndjson.gz` -> `source-07`. */
export function corpusSourceName(file) {
  return file.replace(/\.ndjson(\.gz)?$/, '');
}

/** About the first `bytes` bytes of a corpus file's text (of its compressed bytes when gzipped). */
export function corpusHead(file, bytes = 1 << 20) {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const read = fs.readSync(fd, buf, 0, bytes, 0);
    const head = buf.subarray(0, read);
    // A truncated gzip stream inflates as far as it goes with a sync flush instead of throwing.
    return (file.endsWith('.gz') ? zlib.gunzipSync(head, { finishFlush: zlib.constants.Z_SYNC_FLUSH }) : head).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The first corpus file of `dir` named `source-NN` (plain or gzipped), else its first file. */
export function corpusFile(dir, source) {
  const files = corpusFiles(dir);
  return path.join(dir, files.find((f) => corpusSourceName(f) === source) ?? files[0]);
}
