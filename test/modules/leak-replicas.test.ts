import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadReplicas } from '../../src/db/replicas.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, json, TEST_PG_URL, testDatabaseUrl, type TestApp } from '../helpers/build-app.js';
import { type Replica, startReplica } from '../helpers/pg-replica.js';

/**
 * Read replicas against a real streaming replica of the test PostgreSQL (pg_basebackup -R, on a
 * port of its own): searches read it, a caller's own writes are read from the primary, a replica
 * paused behind the primary or killed is skipped, and searches keep answering throughout.
 */
describe.skipIf(!TEST_PG_URL)('PostgreSQL read replicas', () => {
  let replica: Replica;
  let t: TestApp;
  let staff: User;
  let viewer: User;
  let replicas: ReadReplicas;
  const warnings: string[] = [];
  let standby: pg.Client;

  beforeAll(async () => {
    replica = await startReplica(TEST_PG_URL as string);
    const primaryUrl = await testDatabaseUrl();
    const readUrl = new URL(primaryUrl);
    readUrl.port = String(replica.port);
    // Checked when the test says so (check()), not on a timer.
    t = await buildTestApp({ THREATMON_DATABASE_URL: primaryUrl, THREATMON_DATABASE_READ_URLS: readUrl.toString(), THREATMON_REPLICA_CHECK_MS: '0', THREATMON_REPLICA_MAX_LAG: '1h' });
    replicas = t.app.deps.database.replicas as ReadReplicas;
    expect(replicas.maxLagMs).toBe(3_600_000);
    replicas.log = { warn: (obj) => warnings.push(JSON.stringify(obj)), info: () => undefined };
    staff = (await t.createOrg('enterprise', 'replica-platform', true)).owner;
    viewer = await t.createUser(await t.createOrg('enterprise', 'replica-customer'), 'analyst', 'replica-analyst');
    standby = new pg.Client({ connectionString: readUrl.toString() });
    await standby.connect();
  }, 180_000);

  afterAll(async () => {
    await standby?.end().catch(() => undefined);
    await t?.close();
    replica?.remove();
  });

  const search = async (who: User, qs: string) => {
    const res = await t.as(who, { method: 'GET', url: `/api/v1/leaks/search/${qs}` });
    expect(res.statusCode).toBe(200);
    return json(res).count as number;
  };
  /** Checks the replicas until `ok` holds (the replica replays, or falls behind, in its own time). */
  const until = async (ok: () => boolean) => {
    for (let i = 0; i < 600 && !ok(); i++) {
      await replicas.check();
      if (!ok()) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ok()).toBe(true);
  };
  const primaryLsn = () => replicas.primaryLsn();
  const caughtUp = async () => {
    const lsn = await primaryLsn();
    await until(() => (replicas.states[0]?.healthy ?? false) && (replicas.states[0]?.replayedLsn ?? 0n) >= lsn);
  };
  const ingest = async (email: string) => {
    const source = json(await t.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: `Replica ${email}` } })).id as string;
    const res = await t.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: [{ email }] });
    expect(json(res).accepted).toBe(1);
  };

  it('reads searches from the replica, and a caller\'s own writes from the primary', async () => {
    await caughtUp();
    expect(replicas.states[0]).toMatchObject({ healthy: true, lagSeconds: 0 });
    await standby.query('select pg_wal_replay_pause()');
    try {
      await ingest('fresh@replica.example');
      // The replica has not replayed the ingest: another organization's search reads it, and does
      // not see the record yet; the organization that wrote it reads the primary, and does.
      await replicas.check();
      expect(replicas.states[0]?.healthy).toBe(true);
      expect(await search(viewer, '?email=fresh@replica.example')).toBe(0);
      expect(await search(staff, '?email=fresh@replica.example')).toBe(1);
      // Statistics read the replica too: the record is not counted there yet.
      const stats = json(await t.as(viewer, { method: 'GET', url: '/api/v1/leaks/stats/' }));
      const primaryTotal = json(await t.as(staff, { method: 'GET', url: '/api/v1/leaks/stats/' })).total_records as number;
      expect(stats.total_records).toBe(primaryTotal - 1);

      // Behind by more than the bound (made 1 ms here, so that no test waits for the clock): skipped,
      // once warned, and every search reads the primary.
      replicas.maxLagMs = 1;
      await replicas.check();
      expect(replicas.states[0]?.healthy).toBe(false);
      expect(await search(viewer, '?email=fresh@replica.example')).toBe(1);
      await replicas.check();
      expect(warnings.filter((w) => w.includes('behind the primary'))).toHaveLength(1);
      expect(await t.app.deps.metrics.collect()).toMatch(/threatmon_db_replica_healthy\{replica="127\.0\.0\.1:\d+\/[^"]+"\} 0/);
    } finally {
      replicas.maxLagMs = 3_600_000;
      await standby.query('select pg_wal_replay_resume()');
    }
    await caughtUp();
    expect(await search(viewer, '?email=fresh@replica.example')).toBe(1);
    expect(await t.app.deps.metrics.collect()).toMatch(/threatmon_db_replica_healthy\{replica="[^"]+"\} 1/);
  });

  it('keeps answering searches when the replica dies mid-test, and uses it again once it is back', async () => {
    await caughtUp();
    await ingest('survivor@replica.example');
    await caughtUp();
    await standby.end();
    replica.kill();
    // Still marked healthy: the search fails on the replica, and is answered from the primary.
    expect(replicas.states[0]?.healthy).toBe(true);
    expect(await search(viewer, '?email=survivor@replica.example')).toBe(1);
    expect(replicas.states[0]?.healthy).toBe(false);
    for (let i = 0; i < 3; i++) expect(await search(viewer, '?domain=replica.example')).toBe(2);
    const saved = json(await t.as(viewer, { method: 'POST', url: '/api/v1/leaks/saved-searches/', payload: { name: 'Survivors', query: { email: 'survivor@replica.example' } } }));
    expect(json(await t.as(viewer, { method: 'GET', url: `/api/v1/leaks/saved-searches/${saved.id}/results/` })).count).toBe(1);
    await replicas.check();
    expect(replicas.states[0]?.lagSeconds).toBeNull();
    expect(warnings.filter((w) => w.includes('unreachable') || w.includes('failed during a read')).length).toBe(1);

    replica.start();
    await caughtUp();
    standby = new pg.Client({ connectionString: replica.url });
    expect(await search(viewer, '?email=survivor@replica.example')).toBe(1);
  });
});
