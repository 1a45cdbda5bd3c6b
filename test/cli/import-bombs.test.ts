import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { zipOf } from '../helpers/zip.js';

/**
 * Inputs made to exhaust the importer, through the installed launcher (bin/threatmon.js), whose
 * import runs with a 128 MB heap: one endless line, and compressed runs of zeros before good data.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-bombs-'));
const env = { ...process.env, THREATMON_DATABASE_URL: `sqlite:${path.join(dir, 'bombs.db')}`, THREATMON_LOG_LEVEL: 'warn' };
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function importLeaks(args: string[]) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/threatmon.js', 'import-leaks', ...args, '--create-source', '--no-progress'], { cwd: ROOT, env });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('import-leaks on inputs made to exhaust it', () => {
  it('rejects a 50,000,000-character line as it streams and reads the line after it', async () => {
    const file = path.join(dir, 'endless.txt');
    const fd = fs.openSync(file, 'w');
    const piece = Buffer.alloc(1_000_000, 'A');
    for (let i = 0; i < 50; i++) fs.writeSync(fd, piece);
    fs.writeSync(fd, '\nerin@example.com:a good password\n');
    fs.closeSync(fd);
    const rejects = path.join(dir, 'endless.rejects');
    const res = await importLeaks([file, '--source', 'Endless', '--rejects', rejects]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('1 accepted, 0 duplicates, 1 rejected');
    expect(res.stderr).toContain('line 1: line: line longer than 4096 characters');
    const rejected = JSON.parse(fs.readFileSync(rejects, 'utf8').trim());
    expect(rejected).toMatchObject({ line: 1, reason: 'line: line longer than 4096 characters' });
    expect(rejected.text).toHaveLength(4096);
  }, 120_000);

  it('ends a gzipped run of zeros at the expansion limit, storing what came before it', async () => {
    const file = path.join(dir, 'bomb.txt.gz');
    // 256 MiB of zeros after one good line: about 250 KB gzipped, a ratio near 1,000.
    const gz = zlib.createGzip();
    const out = fs.createWriteStream(file);
    gz.pipe(out);
    gz.write('frank@example.com:a good password\n');
    const zeros = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < 256; i++) if (!gz.write(zeros)) await new Promise<void>((r) => gz.once('drain', () => r()));
    gz.end();
    await new Promise<void>((r) => out.on('close', () => r()));
    const res = await importLeaks([file, '--source', 'Bomb', '--format', 'combo']);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('1 accepted');
    expect(res.stderr).toMatch(/Not read to its end: .*bomb\.txt\.gz expands more than 100 times its compressed size/);
  }, 120_000);

  it('reads the good member of a zip after a member of zeros, which the expansion limit ends', async () => {
    const file = path.join(dir, 'bomb.zip');
    fs.writeFileSync(file, zipOf([
      ['zeros.txt', Buffer.alloc(256 * 1024 * 1024)],
      ['good.txt', Buffer.from('grace@example.com:a good password\nheidi@example.com:another password\n')],
    ], true));
    const res = await importLeaks([file, '--source', 'Zip bomb']);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('2 accepted');
    expect(res.stderr).toMatch(/Not read to its end: .*zeros\.txt expands more than 100 times/);
    expect(res.stderr).toContain('1 compressed member was not read to the end');
  }, 120_000);

  it('reads the zeros to their end as one rejected line when the limits allow it, in bounded memory', async () => {
    const file = path.join(dir, 'allowed.zip');
    fs.writeFileSync(file, zipOf([
      ['zeros.txt', Buffer.alloc(128 * 1024 * 1024)],
      ['good.txt', Buffer.from('ivan@example.com:a good password\n')],
    ], true));
    const res = await importLeaks([file, '--source', 'Zip allowed', '--format', 'combo', '--max-expansion-ratio', '100000']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('1 accepted, 0 duplicates, 1 rejected');
  }, 120_000);
});
