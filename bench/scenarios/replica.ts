import pg from 'pg';
import { startReplica } from '../../test/helpers/pg-replica.js';
import { freshDatabaseUrl, load, type Result, runChild, startServer, stop } from '../harness.js';
import { leakCorpus } from './leaks.js';

/** The replica's lag (seconds) as PostgreSQL sees it, sampled every 250 ms until `done` settles: the largest seen. */
async function sampleLag(replicaUrl: string, primaryUrl: string, done: Promise<unknown>): Promise<number> {
  const replica = new pg.Client({ connectionString: replicaUrl });
  const primary = new pg.Client({ connectionString: primaryUrl });
  await Promise.all([replica.connect(), primary.connect()]);
  let finished = false;
  void done.finally(() => (finished = true));
  let worst = 0;
  try {
    while (!finished) {
      const p = (await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
      const { rows } = await replica.query<{ behind: boolean; s: number | null }>(
        'select pg_last_wal_replay_lsn() < $1::pg_lsn as behind, extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as s',
        [p],
      );
      if (rows[0]?.behind) worst = Math.max(worst, rows[0].s ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await Promise.all([replica.end(), primary.end()]);
  }
  return worst;
}

export const replicaScenarios: Record<string, () => Promise<Result[]>> = {
  /**
   * PostgreSQL (BENCH_PG_URL) with a streaming replica started here (pg_basebackup -R; the whole
   * cluster is copied): leak searches at BENCH_SEARCH_CONNECTIONS (16) against the primary alone,
   * then with the replica in THREATMON_DATABASE_READ_URLS, in alternating turns; then the largest
   * replica lag seen while a 1,000,000-record bulk import loads into the primary.
   */
  async replica() {
    if (!process.env.BENCH_PG_URL && !process.env.BENCH_LEAKS_DB_URL?.startsWith('postgres')) throw new Error('the replica scenario needs PostgreSQL: set BENCH_PG_URL (or BENCH_LEAKS_DB_URL)');
    const { dbUrl, dataDir } = await leakCorpus();
    const replica = await startReplica(dbUrl);
    const readUrl = new URL(dbUrl);
    readUrl.port = String(replica.port);
    const results: Result[] = [];
    try {
      const conns = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
      for (let turn = 1; turn <= 2; turn++) {
        for (const [label, env] of [
          ['primary alone', {}],
          ['primary + 1 replica', { THREATMON_DATABASE_READ_URLS: readUrl.toString() }],
        ] as const) {
          const s = await startServer(`replica-${turn}`, env, dbUrl);
          try {
            const auth = { authorization: `Bearer ${s.token}` };
            results.push(await load(`search domain, ${label} (turn ${turn})`, { url: `${s.url}/api/v1/leaks/search/?domain=corp7.example`, headers: auth, connections: conns }));
          } finally {
            await stop(s);
          }
        }
      }
      // Into a schema of its own: the corpus loaded again, every record new.
      const importing = runChild(['bench/import-leaks.mjs', dataDir, '--bulk'], { THREATMON_DATABASE_URL: await freshDatabaseUrl('replica-lag'), THREATMON_LOG_LEVEL: 'warn' }, []);
      const lag = await sampleLag(readUrl.toString(), dbUrl, importing);
      const imported = JSON.parse(await importing) as { records: number; records_per_sec: number };
      console.log(`replica lag during a bulk import of ${imported.records} records (${imported.records_per_sec} records/s): at most ${lag.toFixed(1)} s`);
      results.push({ scenario: 'replica lag during a bulk import (max s)', requests_per_sec: Number(lag.toFixed(1)), latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0 } as Result);
    } finally {
      replica.remove();
    }
    return results;
  },
};
