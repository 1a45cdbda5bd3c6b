import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, JWT_SECRET, json, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';

/**
 * A bulk load whose import was killed (here: during its load, its process gone) once a server was
 * already running: the server used to say "in progress in another process" at start-up and never
 * look again, leaving full-text search silently empty for the records loaded. Now full-text search
 * answers 503 with Retry-After while any load is pending, every other criterion answers right, and
 * the server's background job finishes the abandoned load by itself.
 */
describe.skipIf(Boolean(TEST_PG_URL))('a bulk load abandoned while a server runs (SQLite)', () => {
  let dir: string;
  let file: string;
  let server: TestApp;
  let importer: ReturnType<typeof createDeps>;
  let viewer: User;
  const system = { p: null, ip: null };
  const search = (qs: string) => server.as(viewer, { method: 'GET', url: `/api/v1/leaks/search/?${qs}` });
  const pendingLoads = () => (importer.database.sqlite?.prepare('select count(*) as n from leak_bulk_loads').get() as { n: number }).n;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-abandoned-'));
    file = path.join(dir, 'db.sqlite');
    importer = createDeps(loadConfig({ THREATMON_DATABASE_URL: `sqlite:${file}`, THREATMON_JWT_SECRET: JWT_SECRET }));
    // The server, with its jobs, looking for abandoned loads every few milliseconds.
    server = await buildTestApp({ THREATMON_DATABASE_URL: `sqlite:${file}` }, { jobs: true, bulkLoadWatchMs: 10 });
    viewer = (await server.createOrg('enterprise', 'searchers')).owner;
  });
  afterAll(async () => {
    await server.close();
    await importer.database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers full-text searches 503 while the load is pending, and finishes it once its import is gone', async () => {
    const leaks = createServices(importer).leaks;
    const before = await leaks.createSource(system, { name: 'Before' });
    await leaks.ingest(before.id, [{ index: 0, value: { email: 'zelda@abandoned.example', full_name: 'Zelda Quarry' } }], system);
    // An import begins a bulk load (this process stands in for it: alive) and loads 2,000 records.
    await leaks.bulk.begin();
    const source = await leaks.createSource(system, { name: 'Abandoned' });
    const records = Array.from({ length: 2000 }, (_, i) => ({ index: i, value: { email: `user${i}@abandoned.example`, full_name: `Quarry Person ${i}` } }));
    expect(await leaks.ingest(source.id, records, system)).toMatchObject({ accepted: 2000 });
    // The server leaves a live load alone; meanwhile full text cannot be right, the rest is.
    const text = await search('q=quarry');
    expect(text.statusCode).toBe(503);
    expect(text.headers['retry-after']).toBe('30');
    expect(json(text)).toMatchObject({ code: 'unavailable', retry_after: 30 });
    expect(json(await search('domain=abandoned.example')).count).toBe(2001);
    expect(json(await search('email=user1999@abandoned.example')).count).toBe(1);
    expect(pendingLoads()).toBe(1);

    // The import is killed while rebuilding ("Rebuilding search indexes"): two of the indexes it set
    // aside are back, the others and the full-text entries are not, and its process is gone.
    const raw = importer.database.sqlite as NonNullable<typeof importer.database.sqlite>;
    const aside = JSON.parse((raw.prepare('select dropped_indexes from leak_bulk_loads').get() as { dropped_indexes: string }).dropped_indexes) as Array<{ type: string; sql: string }>;
    for (const o of aside.filter((x) => x.type === 'index').slice(0, 2)) raw.exec(o.sql);
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => child.once('exit', resolve));
    importer.database.sqlite?.prepare('update leak_bulk_load_processes set pid = ?').run(child.pid);
    // The server's job finds it abandoned and rebuilds (a bound on the wait, not a sleep).
    for (let waited = 0; pendingLoads() > 0 && waited < 60_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pendingLoads()).toBe(0);
    expect(json(await search('q=quarry')).count).toBe(2001);
    expect(json(await search('q=zelda')).count).toBe(1);
    expect((raw.prepare("select count(*) as n from sqlite_master where type = 'index' and tbl_name = 'leak_records' and sql is not null").get() as { n: number }).n).toBe(10);
  }, 120_000);
});
