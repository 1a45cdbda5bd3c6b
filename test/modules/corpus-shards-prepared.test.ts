import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModules } from '../../src/app.js';
import type { CorpusShards } from '../../src/db/corpus-shards.js';
import type { User } from '../../src/modules/identity/index.js';
import { buildTestApp, TEST_PG_URL, type TestApp } from '../helpers/build-app.js';
import { type Replica, startServer } from '../helpers/pg-replica.js';
import { until } from '../helpers/serve.js';
import { corpus, recordsOnEach } from '../helpers/shard-corpus.js';

/**
 * A batch over shards commits by two-phase commit (ShardBatch): its parts prepared on the shards,
 * its row in corpus_commits with the main commit, then its parts committed. A process that dies
 * between leaves parts prepared; recover() ends them as the main transaction ended, at start and
 * in a running server's background job.
 */
describe.skipIf(!TEST_PG_URL)('corpus shards: the prepared parts of a batch cut off', () => {
  const servers: Replica[] = [];
  let sharded: TestApp;
  let staff: User;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) servers.push(await startServer());
    sharded = await buildTestApp({ THREATMON_CORPUS_SHARDS: servers.map((s) => s.url).join(',') });
    staff = (await sharded.createOrg('enterprise', 'shard-platform', true)).owner;
    const source = (await sharded.as(staff, { method: 'POST', url: '/api/v1/leaks/sources/', payload: { name: 'Shard source', breach_date: '2024-01-01' } })).json().id;
    const res = await sharded.as(staff, { method: 'POST', url: `/api/v1/leaks/sources/${source}/records/`, payload: corpus(100, 7) });
    expect(res.statusCode).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await sharded?.close();
    for (const s of servers) s.remove();
  });

  const shardCounts = () => recordsOnEach(servers);

  /** A new record on a shard: a copy of one there, its id (in the same slot) and fingerprint made new. */
  const copyOfARecord = `insert into leak_records (id, source_id, email, username, username_lower, domain, domain_rev, ip, ip_key, phone, full_name,
        password_sha1, password_masked, extra, leaked_at, fingerprint, search_text, email_domain_rev, severity, password_ntlm, created_at) select (left(id::text, 30) || left(md5(random()::text), 5) || right(id::text, 1))::uuid, source_id, email, username, username_lower, domain, domain_rev, ip, ip_key, phone, full_name,
        password_sha1, password_masked, extra, leaked_at, decode(md5(random()::text), 'hex'), search_text, email_domain_rev, severity, password_ntlm, created_at from leak_records limit 1`;

  /**
   * Two batches cut off on the first shard between PREPARE and their main commit's aftermath: one
   * whose main transaction committed (its row in corpus_commits), one whose main transaction did not.
   */
  async function cutOffBatches(shards: CorpusShards): Promise<pg.Client> {
    const shard0 = new pg.Client({ connectionString: servers[0]?.url });
    shard0.on('error', () => {});
    await shard0.connect();
    const [committed, lost] = [randomUUID(), randomUUID()];
    for (const batch of [committed, lost]) {
      await shard0.query('begin');
      await shard0.query(copyOfARecord);
      await shard0.query(`prepare transaction '${shards.gid(batch, 0)}'`);
    }
    await sql`insert into corpus_commits (id) values (${committed})`.execute(sharded.db);
    return shard0;
  }

  async function expectEnded(shard0: pg.Client, before: number[]) {
    expect((await shard0.query('select count(*) as n from pg_prepared_xacts')).rows[0].n).toBe('0');
    await shard0.end();
    expect(await shardCounts()).toEqual(before.map((n, i) => (i === 0 ? n + 1 : n)));
    expect((await sql<{ n: number }>`select count(*)::int as n from corpus_commits`.execute(sharded.db)).rows[0]?.n).toBe(0);
  }

  it('ends the shards\' prepared parts of a batch as its main transaction ended: committed or rolled back', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    const before = await shardCounts();
    const shard0 = await cutOffBatches(shards);
    expect(await shards.recover(sharded.db)).toEqual({ committed: 1, rolledBack: 1 });
    await expectEnded(shard0, before);
  });

  it('waits for a batch whose main transaction is still open, then ends its parts as that transaction did', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    const before = await shardCounts();
    const shard0 = new pg.Client({ connectionString: servers[0]?.url });
    shard0.on('error', () => {});
    await shard0.connect();
    const batch = randomUUID();
    let recovered: Promise<{ committed: number; rolledBack: number }> | undefined;
    await sharded.db.transaction().execute(async (trx) => {
      // As ShardBatch.prepare: the batch's row in its main transaction, then its part prepared.
      await sql`insert into corpus_commits (id) values (${batch})`.execute(trx);
      await shard0.query('begin');
      await shard0.query(copyOfARecord);
      await shard0.query(`prepare transaction '${shards.gid(batch, 0)}'`);
      recovered = shards.recover(sharded.db);
      // Its insert of the batch's id waits on this transaction's row: never a rollback under it.
      // (Asked outside this transaction: pg_stat_activity holds still within one.)
      const mine = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]?.pid;
      const waiting = sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where ${mine}::int = any(pg_blocking_pids(pid)) and query like 'insert into corpus_commits%'`;
      await until('recover waits on the open batch', async () => (await waiting.execute(sharded.db)).rows[0]?.n === 1);
    });
    expect(await recovered).toEqual({ committed: 1, rolledBack: 0 });
    await expectEnded(shard0, before);
  });

  it('ends them in a server that keeps running (its background job), not only at the next start', async () => {
    const shards = sharded.app.deps.database.corpusShards as CorpusShards;
    const before = await shardCounts();
    const shard0 = await cutOffBatches(shards);
    // The server's own job (a turn at start, then every poll: an hour here, so the first is the one seen).
    const job = createModules(sharded.app.deps, { bulkLoadWatchMs: 3_600_000 }).jobs.find((j) => j.name === 'prepared shard parts');
    expect(job).toBeDefined();
    const ended = new Promise<object>((resolve, reject) => job?.start({ info: (obj) => resolve(obj), error: (obj) => reject(new Error(JSON.stringify(obj))) }));
    expect(await ended).toEqual({ committed: 1, rolledBack: 1 });
    await job?.stop();
    await expectEnded(shard0, before);
  });
});
