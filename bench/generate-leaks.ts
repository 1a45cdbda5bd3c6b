/**
 * Writes a realistic leak corpus as NDJSON files, one per source: real-looking e-mails over a
 * skewed (Zipf-like) set of domains, usernames, IPs, phones, names, passwords from a small popular
 * set plus random ones, and extras. Deterministic for a given seed.
 *
 *   tsx bench/generate-leaks.ts OUT_DIR [RECORDS=1000000] [SOURCES=50] [--gzip]
 *
 * --gzip writes source-NN.ndjson.gz (a fifth of the size), as dumps often come.
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { pickWith, seededRandom } from '../src/cli/seeded-random.js';

const FIRST = ['james', 'mary', 'john', 'patricia', 'robert', 'jennifer', 'michael', 'linda', 'william', 'elizabeth', 'david', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen', 'lena', 'yuki', 'ahmed', 'olga', 'pierre', 'sofia', 'mateo', 'chen', 'fatima', 'ivan'];
const LAST = ['smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'rodriguez', 'martinez', 'hernandez', 'lopez', 'gonzalez', 'wilson', 'anderson', 'thomas', 'taylor', 'moore', 'jackson', 'martin', 'lee', 'perez', 'thompson', 'white', 'harris', 'sanchez', 'clark', 'ramirez', 'lewis', 'robinson'];
const BIG = ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'aol.com', 'icloud.com', 'mail.ru', 'gmx.de', 'yandex.ru', 'protonmail.com'];
const POPULAR = ['123456', 'password', '123456789', 'qwerty', 'abc123', 'password1', '111111', 'iloveyou', 'dragon', 'monkey', 'letmein', 'football'];

export function* leakRecords(count: number, seed: number) {
  // Deterministic, and (unlike a float LCG past 2^53) without a short cycle.
  const rnd = seededRandom(seed);
  const pick = pickWith(rnd);
  // Skewed domains: a few huge webmail providers, a long tail of company domains (and their subdomains).
  const domain = () => {
    const r = rnd();
    if (r < 0.6) return BIG[Math.floor(BIG.length * rnd() * rnd())] as string;
    const n = Math.floor(5000 * rnd() * rnd() * rnd());
    return rnd() < 0.1 ? `mail.corp${n}.example` : `corp${n}.example`;
  };
  for (let i = 0; i < count; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const num = Math.floor(rnd() * 10000);
    const rec: Record<string, unknown> = {
      email: `${first}.${last}${num}@${domain()}`,
      full_name: rnd() < 0.5 ? `${first[0]!.toUpperCase()}${first.slice(1)} ${last[0]!.toUpperCase()}${last.slice(1)}` : undefined,
    };
    if (rnd() < 0.4) rec.username = `${first}${last[0]}${num}`;
    if (rnd() < 0.7) rec.password = rnd() < 0.3 ? pick(POPULAR) : `${pick(FIRST)}${Math.floor(rnd() * 100000)}!`;
    if (rnd() < 0.3) rec.ip = `${Math.floor(rnd() * 223) + 1}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}`;
    if (rnd() < 0.1) rec.phone = `+1${Math.floor(2000000000 + rnd() * 7000000000)}`;
    if (rnd() < 0.2) rec.extra = { country: pick(['US', 'DE', 'FR', 'RU', 'BR', 'IN', 'JP']), signup_year: 2005 + Math.floor(rnd() * 20) };
    if (rnd() < 0.5) rec.leaked_at = new Date(Date.UTC(2019 + Math.floor(rnd() * 7), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28))).toISOString();
    yield rec;
  }
}

export function generate(outDir: string, records: number, sources: number, gzip = false): string[] {
  fs.mkdirSync(outDir, { recursive: true });
  const files: string[] = [];
  const per = Math.ceil(records / sources);
  for (let src = 0; src < sources; src++) {
    const file = path.join(outDir, `source-${String(src).padStart(2, '0')}.ndjson${gzip ? '.gz' : ''}`);
    const n = Math.min(per, records - src * per);
    if (n <= 0) break;
    const chunks: string[] = [];
    const fd = fs.openSync(file, 'w');
    // Gzipped, a member per chunk: concatenated members are one gzip stream to every reader.
    const write = (text: string) => (gzip ? fs.writeSync(fd, gzipSync(text)) : fs.writeSync(fd, text));
    for (const rec of leakRecords(n, 1000 + src)) {
      chunks.push(JSON.stringify(rec));
      if (chunks.length === 5000) {
        write(`${chunks.join('\n')}\n`);
        chunks.length = 0;
      }
    }
    if (chunks.length) write(`${chunks.join('\n')}\n`);
    fs.closeSync(fd);
    files.push(file);
  }
  return files;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const [out = 'bench/data/leaks', records = '1000000', sources = '50'] = args.filter((a) => a !== '--gzip');
  const started = Date.now();
  const files = generate(out, Number(records), Number(sources), args.includes('--gzip'));
  console.error(`wrote ${records} records in ${files.length} files to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
