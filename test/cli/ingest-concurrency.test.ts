import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, TEST_PG_URL, testDatabaseUrl } from '../helpers/build-app.js';
import { startServer as startServe, stopServers, withDb } from '../helpers/serve.js';

/**
 * Two `threatmon serve` processes on one database ingest the same records at once, one in the
 * opposite order of the other: PostgreSQL used to lock the records' keys in request order and
 * answer one of them 503 ("deadlock detected") in most trials. Every ingest must succeed, each
 * record be stored once and each alert raised once.
 */
const PASSWORD = 'an ingest concurrency test passphrase';
const TRIALS = 6;
const RECORDS = 1000;
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await stopServers(children);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function databaseUrl(kind: 'sqlite' | 'postgres'): Promise<string> {
  if (kind === 'postgres') return testDatabaseUrl();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-ingest-'));
  dirs.push(dir);
  return `sqlite:${path.join(dir, 'db.sqlite')}`;
}

describe.each([
  ['SQLite', 'sqlite' as const, false],
  ['PostgreSQL', 'postgres' as const, !TEST_PG_URL],
])('concurrent ingests of the same records through two API processes (%s)', (_name, kind, skip) => {
  it.skipIf(skip)(`stores each record once and raises each alert once, in ${TRIALS} trials of opposite orders`, async () => {
    const url = await databaseUrl(kind);
    const env = { THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, THREATMON_ADMIN_PASSWORD: PASSWORD };
    const first = await startServe(env);
    children.push(first.child);
    // The second starts once the first has migrated the database and made the admin.
    const second = await startServe(env);
    children.push(second.child);
    const call = async (base: string, method: string, route: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${base}/api/v1${route}`, {
        method,
        headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: JSON.parse(await res.text()) };
    };
    const { access } = (await call(first.base, 'POST', '/auth/token/', null, { username: 'admin', password: PASSWORD })).body;
    await call(first.base, 'POST', '/monitoring/', access, { name: 'Repro', type: 'domain', terms: ['repro.example'] });
    for (let trial = 0; trial < TRIALS; trial++) {
      const source = (await call(first.base, 'POST', '/leaks/sources/', access, { name: `Dump ${trial}` })).body.id;
      const records = Array.from({ length: RECORDS }, (_, i) => ({ email: `r${i}@${i % 2 ? 'repro.example' : 'other.example'}` }));
      const [a, b] = await Promise.all([
        call(first.base, 'POST', `/leaks/sources/${source}/records/`, access, records),
        call(second.base, 'POST', `/leaks/sources/${source}/records/`, access, [...records].reverse()),
      ]);
      expect([a.status, b.status], JSON.stringify([a.body, b.body]).slice(0, 500)).toEqual([200, 200]);
      expect(a.body.accepted + b.body.accepted).toBe(RECORDS);
      expect(a.body.duplicates + b.body.duplicates).toBe(RECORDS);
      expect(a.body.alerts_raised + b.body.alerts_raised).toBe(RECORDS / 2);
      const stored = await withDb(url, async (db) => ({
        records: Number((await db.selectFrom('leak_records').select((eb) => eb.fn.countAll().as('n')).where('source_id', '=', source).executeTakeFirstOrThrow()).n),
        alerts: Number(
          (
            await db
              .selectFrom('monitor_alerts')
              .innerJoin('leak_records', 'leak_records.id', 'monitor_alerts.leak_record_id')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('leak_records.source_id', '=', source)
              .executeTakeFirstOrThrow()
          ).n,
        ),
      }));
      expect(stored).toEqual({ records: RECORDS, alerts: RECORDS / 2 });
    }
  }, 180_000);
});
