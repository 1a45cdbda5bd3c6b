import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { JWT_SECRET } from '../helpers/build-app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-cli-'));
const env = { ...process.env, THREATMON_DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}`, THREATMON_LOG_LEVEL: 'warn' };

function run(args: string[], input?: string, extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env: { ...env, ...extraEnv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * Starts `node ...argv`, an import (with --no-progress) that reads `fifo`, a named pipe this test
 * writes: chunks of `chunk(from, count)` records go in, the pipe staying open, until the first
 * progress line shows (a commit: records are stored), so the import cannot reach the end of its
 * input however fast or slow the machine is. Then `signal` is sent, and once the import says it is
 * stopping, the pipe is closed. Returns the exit code, stderr, how many records went into the pipe
 * and how many the import says it stored.
 */
async function interruptImport(argv: string[], signal: NodeJS.Signals, fifo: string, chunk: (from: number, count: number) => string) {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env });
  let stderr = '';
  let signalled = false;
  const stopping = new Promise<void>((resolve) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      if (!signalled && /\d+ records[ ,]/.test(stderr)) {
        signalled = true;
        child.kill(signal);
      }
      if (/stopping after the records read so far are stored/.test(stderr)) resolve();
    });
  });
  let ended = false;
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve)).finally(() => (ended = true));
  const pipe = await feedFifo(fifo, closed);
  let written = 0;
  const CHUNK = 1_000;
  while (pipe && !signalled && !ended && written < 2_000_000) {
    await pipe.write(chunk(written, CHUNK));
    written += CHUNK;
  }
  await Promise.race([stopping, closed]);
  await pipe?.close();
  const code = await closed;
  const stored = Number(/Interrupted: stored the first (\d+) records/.exec(stderr)?.[1]);
  expect(stored, stderr).toBeGreaterThan(0);
  expect(stored).toBeLessThanOrEqual(written);
  return { code, stderr, stored, written };
}

/** A new named pipe at `file`. */
function makeFifo(file: string): string {
  fs.rmSync(file, { force: true });
  const made = spawnSync('mkfifo', [file]);
  expect(made.status, String(made.stderr)).toBe(0);
  return file;
}

/**
 * Opens `fifo` for writing once its reader (a child process) opens it; if the child ends first,
 * the open is released (a reader that never came would leave it waiting) and null is returned.
 */
async function feedFifo(fifo: string, childClosed: Promise<unknown>): Promise<fs.promises.FileHandle | null> {
  const opening = fs.promises.open(fifo, 'w');
  const ended = await Promise.race([opening.then(() => false), childClosed.then(() => true)]);
  if (!ended) return opening;
  const release = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  await (await opening).close();
  fs.closeSync(release);
  return null;
}

/** `count` NDJSON records numbered from `from`: `${name}${i}@${name}.example`. */
function ndjson(name: string, from: number, count: number, extra: (i: number) => object = () => ({})): string {
  return `${Array.from({ length: count }, (_, k) => JSON.stringify({ email: `${name}${from + k}@${name}.example`, ...extra(from + k) })).join('\n')}\n`;
}

/** Runs `argv` reading `fifo`, fed `input` whole. */
async function runFed(argv: string[], fifo: string, input: string) {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const pipe = await feedFifo(fifo, closed);
  await pipe?.write(input);
  await pipe?.close();
  return { code: await closed, stderr };
}

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('threatmon CLI', () => {
  it('prints help for the program and each command', async () => {
    const top = await run(['--help']);
    expect(top.code).toBe(0);
    for (const cmd of ['serve', 'migrate', 'create-org', 'create-user']) expect(top.stdout).toContain(cmd);
    const cu = await run(['create-user', '--help']);
    expect(cu.code).toBe(0);
    expect(cu.stdout).toContain('--password-stdin');
    expect(cu.stdout).toContain('--staff');
  });

  it('migrates, creates an organization and a user who can log in', async () => {
    const m = await run(['migrate']);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/Applied: 0001_organizations_users|up to date/);
    const org = await run(['create-org', 'Globex', '--plan', 'professional']);
    expect(org.code, org.stderr).toBe(0);
    expect(org.stdout).toContain('Created organization "Globex"');
    const user = await run(['create-user', '--org', 'Globex', '--username', 'hank', '--role', 'admin', '--password-stdin'], 'a long enough password\n');
    expect(user.code, user.stderr).toBe(0);
    expect(user.stdout).toContain('Created user "hank"');
    expect(user.stdout).not.toContain('a long enough password');
    const generated = await run(['create-user', '--org', 'Globex', '--username', 'ops', '--role', 'viewer', '--staff']);
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(/Password: \S{20,}/);
  }, 120_000);

  it('fails clearly on bad input', async () => {
    const plan = await run(['create-org', 'X', '--plan', 'gold']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain('expected one of starter, professional, enterprise');
    const noOrg = await run(['create-user', '--org', 'Nope', '--username', 'u', '--role', 'viewer', '--password-stdin'], 'a long enough password');
    expect(noOrg.code).toBe(1);
    expect(noOrg.stderr).toContain('No organization named "Nope"');
    const dup = await run(['create-org', 'Globex']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');
    const weak = await run(['create-user', '--org', 'Globex', '--username', 'weak', '--role', 'viewer', '--password-stdin'], 'short');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('password: must be at least 12 characters');
    const badEnv = await run(['migrate'], undefined, { THREATMON_PORT: 'eighty' });
    expect(badEnv.code).toBe(1);
    expect(badEnv.stderr).toContain('THREATMON_PORT');
  }, 120_000);

  it('imports leak files (CSV, NDJSON, JSON array) idempotently, with a summary', async () => {
    fs.writeFileSync(path.join(dir, 'a.csv'), 'email,password,City\nalice@x.example,secretpass1,Paris\nbad,pw,\nbob@x.example,,Rome\n');
    fs.writeFileSync(path.join(dir, 'b.ndjson'), '{"email":"carol@x.example"}\nnot json\n{"username":"dave"}\n');
    fs.writeFileSync(path.join(dir, 'c.json'), JSON.stringify([{ email: 'erin@x.example', password: 'pw-erin-123' }, { phone: '12' }]));
    const noSource = await run(['import-leaks', path.join(dir, 'a.csv'), '--source', 'CLI dump']);
    expect(noSource.code).toBe(1);
    expect(noSource.stderr).toContain('--create-source');
    // At the most verbose log level: no password in anything the import prints.
    const csv = await run(['import-leaks', path.join(dir, 'a.csv'), '--source', 'CLI dump', '--create-source'], undefined, { THREATMON_LOG_LEVEL: 'trace' });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stderr).toContain('2 accepted, 0 duplicates, 1 rejected');
    expect(csv.stderr).toContain('record 1: email: must be a valid e-mail address');
    expect(csv.stderr + csv.stdout).not.toContain('secretpass1');
    const again = await run(['import-leaks', path.join(dir, 'a.csv'), '--source', 'CLI dump']);
    expect(again.stderr).toContain('0 accepted, 2 duplicates, 1 rejected');
    const nd = await run(['import-leaks', path.join(dir, 'b.ndjson'), '--source', 'CLI dump']);
    expect(nd.stderr).toContain('2 accepted, 0 duplicates, 1 rejected');
    const js = await run(['import-leaks', path.join(dir, 'c.json'), '--source', 'CLI dump', '--format', 'json'], undefined, { THREATMON_LOG_LEVEL: 'trace' });
    expect(js.stderr).toContain('1 accepted, 0 duplicates, 1 rejected');
    expect(js.stderr + js.stdout).not.toContain('pw-erin-123');
    // Keys made by the CLI's reader thread are the ones the API makes: the same records sent over
    // the API are duplicates in this source, and new in another.
    const deps = createDeps(loadConfig({ ...env, THREATMON_JWT_SECRET: JWT_SECRET }));
    try {
      const { leaks } = createServices(deps);
      const byName = async (name: string) => (await leaks.findSourceByName(name))?.id as string;
      const records = [{ index: 0, value: { email: 'alice@x.example', password: 'secretpass1', extra: { City: 'Paris' } } }, { index: 1, value: { email: 'carol@x.example' } }];
      const actor = { p: null, ip: null };
      expect(await leaks.ingest(await byName('CLI dump'), records, actor)).toMatchObject({ accepted: 0, duplicates: 2 });
      const other = await run(['import-leaks', path.join(dir, 'b.ndjson'), '--source', 'CLI other', '--create-source']);
      expect(other.stderr).toContain('2 accepted, 0 duplicates, 1 rejected');
      expect(await leaks.ingest(await byName('CLI other'), records, actor)).toMatchObject({ accepted: 1, duplicates: 1 });
    } finally {
      await deps.database.close();
    }
    const missing = await run(['import-leaks', path.join(dir, 'nope.csv'), '--source', 'CLI dump']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');
    const help = await run(['import-leaks', '--help']);
    expect(help.stdout).toContain('--create-source');
    expect(help.stdout).toContain('--bulk');
  }, 180_000);

  it('refuses a create-user password found in the leak corpus, creating nobody', async () => {
    const file = path.join(dir, 'breached.ndjson');
    fs.writeFileSync(file, `${JSON.stringify({ email: 'victim@breached.example', password: 'cli breached passphrase' })}\n`);
    const imported = await run(['import-leaks', file, '--source', 'Breached', '--create-source', '--no-progress']);
    expect(imported.code, imported.stderr).toBe(0);
    const refused = await run(['create-user', '--org', 'Globex', '--username', 'breached-user', '--role', 'viewer', '--password-stdin'], 'cli breached passphrase\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('appears in a known breach');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(path.join(dir, 'cli.db'), { readonly: true });
    try {
      expect(db.prepare("select count(*) as n from users where username = 'breached-user'").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('stores what it read before a broken place in a file, says where, exits 1, and the mended file loads the rest', async () => {
    const good = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => JSON.stringify({ email: `broken${from + i}@broken.example` }));
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, `[${good(0, 2500).join(',')},{"email" "oops"},${good(2500, 4000).join(',')}]`);
    const broken = await run(['import-leaks', file, '--source', 'Broken', '--create-source']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('Stopped: stored the first 2500 records of');
    expect(broken.stderr).toContain('2500 accepted, 0 duplicates, 0 rejected');
    expect(broken.stderr).toContain(`threatmon: cannot read ${file} past its first 2500 records: Parser cannot parse input`);
    fs.writeFileSync(file, `[${good(0, 4000).join(',')}]`);
    const mended = await run(['import-leaks', file, '--source', 'Broken']);
    expect(mended.code, mended.stderr).toBe(0);
    expect(mended.stderr).toContain('1500 accepted, 2500 duplicates, 0 rejected');
  }, 60_000);

  it('runs import-leaks from the installed launcher (bin/threatmon.js re-runs it with a bounded heap)', async () => {
    const viaBin = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['bin/threatmon.js', ...args], { cwd: ROOT, env });
        let stderr = '';
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (code) => resolve({ code, stderr }));
      });
    fs.writeFileSync(path.join(dir, 'bin.ndjson'), '{"email":"bin1@launcher.example"}\n{"email":"bin2@launcher.example"}\n');
    const ok = await viaBin(['import-leaks', path.join(dir, 'bin.ndjson'), '--source', 'Launcher', '--create-source']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('2 accepted, 0 duplicates, 0 rejected');
    const missing = await viaBin(['import-leaks', path.join(dir, 'nope.ndjson'), '--source', 'Launcher']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');
  }, 120_000);

  it('imports with --bulk: indexes set aside, rebuilt at the end, records searchable', async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ email: `user${i}@bulk-cli.example`, full_name: `Bulk Person${i}` }));
    fs.writeFileSync(path.join(dir, 'bulk.ndjson'), `${lines.join('\n')}\n${lines[0]}\n`);
    const bulk = await run(['import-leaks', path.join(dir, 'bulk.ndjson'), '--source', 'CLI bulk', '--create-source', '--bulk']);
    expect(bulk.code, bulk.stderr).toBe(0);
    expect(bulk.stderr).toContain('2500 accepted, 1 duplicates, 0 rejected');
    expect(bulk.stderr).toMatch(/Search indexes rebuilt in \d+\.\d s/);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(path.join(dir, 'cli.db'), { readonly: true });
    try {
      expect(db.prepare('select count(*) as n from leak_bulk_loads').get()).toEqual({ n: 0 });
      expect(db.prepare("select count(*) as n from sqlite_master where type = 'index' and tbl_name = 'leak_records' and sql is not null").get()).toEqual({ n: 10 });
      expect(db.prepare(`select count(*) as n from leak_records_fts where leak_records_fts match '"person 2499"'`).get()).toEqual({ n: 1 });
    } finally {
      db.close();
    }
  }, 120_000);

  it('stops import-leaks on Ctrl-C (SIGINT) keeping what it stored, and the same command loads the rest', async () => {
    const extra = (i: number) => ({ full_name: `Stop Person${i}` });
    const fifo = makeFifo(path.join(dir, 'sigint.ndjson'));
    const args = ['import-leaks', fifo, '--source', 'Interrupted', '--create-source', '--bulk', '--no-progress'];
    const argv = ['--import', 'tsx', 'src/cli/main.ts', ...args];
    const { code, stderr, stored, written } = await interruptImport(argv, 'SIGINT', fifo, (from, n) => ndjson('sigint', from, n, extra));
    const total = written + 3_000;
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(`${stored} accepted, 0 duplicates, 0 rejected`);
    expect(stderr).toContain('Run the same command again to load the rest');
    expect(stderr).toMatch(/Search indexes rebuilt in/);
    const Database = (await import('better-sqlite3')).default;
    const count = () => {
      const db = new Database(path.join(dir, 'cli.db'), { readonly: true });
      try {
        return {
          records: (db.prepare("select count(*) as n from leak_records where email like '%@sigint.example'").get() as { n: number }).n,
          loads: (db.prepare('select count(*) as n from leak_bulk_loads').get() as { n: number }).n,
          indexes: (db.prepare("select count(*) as n from sqlite_master where type = 'index' and tbl_name = 'leak_records' and sql is not null").get() as { n: number }).n,
        };
      } finally {
        db.close();
      }
    };
    // Everything it reported stored is stored, and the bulk load ended as at the end of a file.
    expect(count()).toEqual({ records: stored, loads: 0, indexes: 10 });
    const again = await runFed(argv, fifo, ndjson('sigint', 0, total, extra));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${total - stored} accepted, ${stored} duplicates, 0 rejected`);
    expect(again.stderr).toMatch(/^Imported /m);
    expect(count()).toEqual({ records: total, loads: 0, indexes: 10 });
  }, 180_000);

  it('stops import-leaks run from the launcher on a SIGTERM sent to the launcher alone (a process manager)', async () => {
    const fifo = makeFifo(path.join(dir, 'sigterm.ndjson'));
    const argv = ['bin/threatmon.js', 'import-leaks', fifo, '--source', 'Terminated', '--create-source', '--no-progress'];
    const { code, stderr, stored } = await interruptImport(argv, 'SIGTERM', fifo, (from, n) => ndjson('sigterm', from, n));
    expect(code, stderr).toBe(143);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(path.join(dir, 'cli.db'), { readonly: true });
    try {
      expect(db.prepare("select count(*) as n from leak_records where email like '%@sigterm.example'").get()).toEqual({ n: stored });
    } finally {
      db.close();
    }
  }, 120_000);

  it('seeds a demo once: users who can log in, incidents with IOCs, a searchable leak source', async () => {
    const demoEnv = { THREATMON_DATABASE_URL: `sqlite:${path.join(dir, 'demo.db')}` };
    const seeded = await run(['seed-demo', '--records', '300'], undefined, demoEnv);
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(seeded.stdout).toContain('Created organization "Demo"');
    expect(seeded.stdout).toContain('2 monitors, 3 incidents with 8 IOCs; leak source "Demo breach (generated)" holds 300 generated records.');
    const passwords = Object.fromEntries([...seeded.stdout.matchAll(/(owner|admin|analyst|viewer)\s+username: (\S+)\s+password: (\S+)/g)].map((m) => [m[1], [m[2], m[3]]]));
    expect(Object.keys(passwords).sort()).toEqual(['admin', 'analyst', 'owner', 'viewer']);
    const again = await run(['seed-demo'], undefined, demoEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('"Demo" already exists');
    const { createDeps: deps } = await import('../../src/deps.js');
    const d = deps(loadConfig({ ...demoEnv, THREATMON_JWT_SECRET: JWT_SECRET }));
    try {
      const s = createServices(d);
      const [username, password] = passwords.analyst as [string, string];
      const pair = await s.auth.login(username, password, { ip: '127.0.0.1' } as never);
      expect(pair.token_type).toBe('Bearer');
      const db = d.database.db;
      const counts = await db.selectFrom('incidents').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(counts.n)).toBe(3);
      const monitors = await db.selectFrom('monitors').select(['type', 'terms']).orderBy('name').execute();
      expect(monitors).toEqual([
        { type: 'keyword', terms: '["project falcon","finance"]' },
        { type: 'domain', terms: '["demo-corp.example"]' },
      ]);
      const records = await db.selectFrom('leak_records').select((eb) => eb.fn.countAll<number>().as('n')).where('email', 'like', '%@demo-corp.example').executeTakeFirstOrThrow();
      expect(Number(records.n)).toBeGreaterThan(10);
    } finally {
      await d.database.close();
    }
  });

  it('serves: creates the first admin once, answers, and shuts down gracefully on SIGTERM', async () => {
    const dbEnv = { THREATMON_DATABASE_URL: `sqlite:${path.join(dir, 'serve.db')}`, THREATMON_PORT: '0', THREATMON_LOG_LEVEL: 'info' };
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], { cwd: ROOT, env: { ...env, ...dbEnv } });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line in: ${out}`)), 20_000);
      child.stdout?.on('data', () => {
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m?.[1]) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const password = /password: (\S+)/.exec(out)?.[1];
    expect(out).toContain('username: admin');
    expect(password).toBeTruthy();
    const login = await fetch(`${url}/api/v1/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    expect(login.status).toBe(200);
    const { access } = (await login.json()) as { access: string };
    const me = (await (await fetch(`${url}/api/v1/auth/me/`, { headers: { authorization: `Bearer ${access}` } })).json()) as Record<string, any>;
    expect(me).toMatchObject({ username: 'admin', role: 'owner', is_staff: true, organization: { name: 'Default', plan: 'enterprise' } });
    // The password was printed to the terminal, never into a log line.
    expect(out.split('\n').filter((l) => l.startsWith('{') && l.includes(password as string))).toEqual([]);
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(out).toContain('shutting down');
  });
});
