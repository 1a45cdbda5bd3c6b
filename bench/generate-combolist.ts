/**
 * A combolist as dumps come, and the same records as NDJSON, for the dumps bench:
 *   npx tsx bench/generate-combolist.ts DIR RECORDS
 * writes DIR/combo.txt.gz (email:password lines: e-mails at 50,000 domains and a few webmails,
 * some secrets as MD5 or SHA-1 hashes, 10% of lines in Windows-1252, 5% junk lines that cannot be
 * read) and DIR/records.ndjson (the readable lines' records, the same bytes of password). Seeded:
 * the same files every run.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import iconv from 'iconv-lite';
import { pickWith, seededRandom } from '../src/cli/seeded-random.js';

const [dir = 'bench/data/dumps', countArg = '1000000'] = process.argv.slice(2);
const count = Number(countArg);
fs.mkdirSync(dir, { recursive: true });
const random = seededRandom(20261127);
const pick = pickWith(random);
const FIRST = ['james', 'mary', 'robert', 'patricia', 'john', 'jennifer', 'michael', 'linda', 'david', 'elizabeth', 'renée', 'josé', 'zoë', 'françois', 'maël', 'inès'];
const LAST = ['smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'martin', 'lefèvre', 'müller', 'núñez'];
const WEBMAIL = ['gmail.com', 'yahoo.com', 'hotmail.com', 'outlook.com', 'mail.ru', 'gmx.de'];
const WORDS = ['summer', 'dragon', 'sunshine', 'monkey', 'football', 'letmein', 'shadow', 'master', 'été', 'contraseña', 'mañana'];
const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
const ascii = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');

const combo = zlib.createGzip({ level: 6 });
combo.pipe(fs.createWriteStream(path.join(dir, 'combo.txt.gz')));
const ndjson = fs.createWriteStream(path.join(dir, 'records.ndjson'));
let comboBuf: Buffer[] = [];
let ndjsonBuf: string[] = [];
const flush = async () => {
  if (!combo.write(Buffer.concat(comboBuf))) await new Promise<void>((r) => combo.once('drain', () => r()));
  if (!ndjson.write(ndjsonBuf.join(''))) await new Promise<void>((r) => ndjson.once('drain', () => r()));
  comboBuf = [];
  ndjsonBuf = [];
};
for (let i = 0; i < count; i++) {
  const r = random();
  if (r < 0.05) {
    comboBuf.push(Buffer.from(`${pick(['', 'garbage line without a separator', ':nologin', `${pick(FIRST)} ${pick(LAST)}:two words`])}\n`));
  } else {
    const domain = random() < 0.3 ? pick(WEBMAIL) : `corp${Math.floor(random() * 50_000)}.example`;
    const email = `${ascii(pick(FIRST))}.${ascii(pick(LAST))}${i}@${domain}`;
    const kind = random();
    const secret = kind < 0.05 ? hex(32) : kind < 0.08 ? hex(40) : `${pick(WORDS)}${Math.floor(random() * 10_000)}`;
    // About one line in ten is Windows-1252: its password holds an accent.
    const latin = /[^\x00-\x7f]/.test(secret) && random() < 0.5;
    const line = `${email}:${secret}\n`;
    comboBuf.push(latin ? iconv.encode(line, 'win1252') : Buffer.from(line));
    const record: Record<string, unknown> = { email };
    if (kind < 0.05) record.extra = { password_hash: secret, hash_type: 'md5' };
    else if (kind < 0.08) record.password_sha1 = secret;
    else record.password = secret;
    ndjsonBuf.push(`${JSON.stringify(record)}\n`);
  }
  if (comboBuf.length >= 10_000) await flush();
}
await flush();
await new Promise<void>((r) => combo.end(() => r()));
await new Promise<void>((r) => ndjson.end(() => r()));
console.log(`wrote ${count} lines to ${dir}/combo.txt.gz and their records to ${dir}/records.ndjson`);
