import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { JWT_SECRET, TEST_PG_URL, testDatabaseUrl } from '../helpers/build-app.js';
import { startServer as startServe, stopServers, withDb } from '../helpers/serve.js';

/**
 * Two `threatmon serve` processes on one PostgreSQL database, each with its own matcher and scan
 * runner: two concurrent ingests of the same records into them, while the monitor's backfill and
 * a re-scan run, raise each (monitor, record, term) alert exactly once, with one alert.created
 * event each, and the figures every answer reported add up to it.
 */
const PASSWORD = 'a concurrency test admin passphrase';
const children: ChildProcess[] = [];
afterAll(() => stopServers(children));

async function startServer(url: string): Promise<string> {
  const { base, child } = await startServe({ THREATMON_DATABASE_URL: url, THREATMON_JWT_SECRET: JWT_SECRET, THREATMON_ADMIN_PASSWORD: PASSWORD });
  children.push(child);
  return base;
}

describe.skipIf(!TEST_PG_URL)('monitoring across two API processes (PostgreSQL)', () => {
  it('never raises an alert twice under two concurrent ingests of the same records and two scans', async () => {
    const url = await testDatabaseUrl();
    const a = await startServer(url);
    const b = await startServer(url);
    const call = async (base: string, method: string, route: string, token: string | null, body?: unknown) => {
      const res = await fetch(`${base}/api/v1${route}`, {
        method,
        headers: { ...(token && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      expect(res.status, `${method} ${route}: ${text}`).toBeLessThan(300);
      return JSON.parse(text);
    };
    const { access } = await call(a, 'POST', '/auth/token/', null, { username: 'admin', password: PASSWORD });
    const source = (await call(a, 'POST', '/leaks/sources/', access, { name: 'Concurrent dump' })).id;
    // Already in the corpus: 100 matching records of 300, for the backfill.
    const old = Array.from({ length: 300 }, (_, i) => ({ email: `old${i}@${i % 3 === 0 ? 'conc.example' : 'other.example'}` }));
    await call(a, 'POST', `/leaks/sources/${source}/records/`, access, old);
    // Arriving while it scans, to both processes at once: 300 matching records of 600.
    const fresh = Array.from({ length: 600 }, (_, i) => ({ email: `new${i}@${i % 2 === 0 ? 'sub.conc.example' : 'other.example'}` }));
    const monitor = await call(b, 'POST', '/monitoring/', access, { name: 'Concurrent', type: 'domain', terms: ['conc.example'] });
    const [ingestA, ingestB, rescan] = await Promise.all([
      call(a, 'POST', `/leaks/sources/${source}/records/`, access, fresh),
      call(b, 'POST', `/leaks/sources/${source}/records/`, access, fresh),
      call(a, 'POST', `/monitoring/${monitor.id}/scan/`, access),
    ]);
    expect(ingestA.accepted + ingestB.accepted).toBe(600);
    expect(rescan.status).toBe('queued');
    // Both runners poll; wait until no scan of the monitor is left to run.
    let scans: Array<{ status: string; alerts_raised: number }> = [];
    for (let i = 0; i < 10_000; i++) {
      scans = (await call(a, 'GET', `/monitoring/${monitor.id}/scans/`, access)).results;
      if (scans.length >= 1 && scans.every((s) => s.status === 'completed')) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(scans.every((s) => s.status === 'completed')).toBe(true);

    await withDb(url, async (db) => {
      const alerts = await db.selectFrom('monitor_alerts').select(['leak_record_id', 'matched_term']).where('monitor_id', '=', monitor.id).execute();
      expect(alerts).toHaveLength(400);
      expect(new Set(alerts.map((x) => x.leak_record_id)).size).toBe(400);
      const events = await db.selectFrom('events').select('data').where('type', '=', 'alert.created').execute();
      expect(events.filter((e) => JSON.parse(e.data).monitor.id === monitor.id)).toHaveLength(400);
    });
    const reported = ingestA.alerts_raised + ingestB.alerts_raised + scans.reduce((n, s) => n + s.alerts_raised, 0);
    expect(reported).toBe(400);
  });
});
