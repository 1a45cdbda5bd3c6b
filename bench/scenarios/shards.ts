import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { type Replica, startServer as startPgServer } from '../../test/helpers/pg-replica.js';
import { corpusFile, corpusHead } from '../corpus-files.mjs';
import { ADMIN_PASSWORD, freshDatabaseUrl, load, type Result, ROOT, runChild, startServer, stop } from '../harness.js';
import { IMPORT_V8_FLAGS } from '../../bin/import-flags.js';

interface Imported {
  records: number;
  seconds: number;
  load_seconds: number;
  records_per_sec: number;
  rebuild_ms: Record<string, number>;
}

/** import-leaks --bulk of `dataDir` into `dbUrl` (with `env`), as leakCorpus runs it. */
async function importInto(dataDir: string, dbUrl: string, env: Record<string, string>): Promise<Imported> {
  return JSON.parse(
    await runChild(['bench/import-leaks.mjs', dataDir, '--bulk'], { THREATMON_DATABASE_URL: dbUrl, THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD, ...env }, IMPORT_V8_FLAGS),
  ) as Imported;
}

async function count(url: string, query: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query(query)).rows[0].n);
  } finally {
    await c.end();
  }
}

export const shardScenarios: Record<string, () => Promise<Result[]>> = {
  /**
   * The corpus over three PostgreSQL servers started here (BENCH_PG_URL for the main database),
   * beside the same files in one database of the local server: the bulk import (the whole and per
   * shard), then each kind of search at BENCH_SEARCH_CONNECTIONS (16) on both, in turns. Every
   * server shares this machine's two cores: the figures compare what the coordinator adds, not
   * what three machines would reach.
   */
  async shards() {
    const records = Number(process.env.BENCH_LEAK_RECORDS ?? 1_000_000);
    const dataDir = process.env.BENCH_LEAK_DATA ?? path.join(ROOT, 'bench', 'data', `leaks-${records}`);
    if (!fs.existsSync(dataDir)) await runChild(['bench/generate-leaks.ts', dataDir, String(records), '50'], {});
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    const servers: Replica[] = [];
    const results: Result[] = [];
    const row = (scenario: string, value: number) => ({ scenario, requests_per_sec: value, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0 }) as Result;
    try {
      // Each shard as the local server is set: its shared_buffers, durable writes.
      for (let i = 0; i < 3; i++) servers.push(await startPgServer({ shared_buffers: '128MB', fsync: 'on', max_wal_size: '4GB' }));
      const shardsEnv = { THREATMON_CORPUS_SHARDS: servers.map((s) => s.url).join(',') };
      const singleUrl = await freshDatabaseUrl('shards-single');
      const mainUrl = await freshDatabaseUrl('shards-main');
      const one = await importInto(dataDir, singleUrl, {});
      console.log(`one server: import-leaks --bulk ${one.records} records in ${one.seconds} s (load ${one.load_seconds} s) = ${one.records_per_sec} records/s`);
      const three = await importInto(dataDir, mainUrl, shardsEnv);
      const perShard = await Promise.all(servers.map((s) => count(s.url, 'select count(*) as n from leak_records')));
      const builds = servers.map((_, i) => Object.entries(three.rebuild_ms).filter(([k]) => k.startsWith(`shard ${i}:`)).reduce((n, [, ms]) => n + ms, 0));
      console.log(`three shards: import-leaks --bulk ${three.records} records in ${three.seconds} s (load ${three.load_seconds} s) = ${three.records_per_sec} records/s; ` +
        `per shard ${perShard.join(' / ')} records = ${perShard.map((n) => Math.round(n / three.load_seconds)).join(' / ')} records/s while loading; index builds per shard ${builds.map((ms) => (ms / 1000).toFixed(0)).join(' / ')} s of build time`);
      results.push(row(`import-leaks --bulk ${records}, one server (records/s)`, one.records_per_sec), row(`import-leaks --bulk ${records}, three shards (records/s)`, three.records_per_sec));
      // The floor of the whole work beside each (bench/pg-files-floor.mjs): the same files read, normalised and keyed by a bare program, COPYed unindexed, then indexed.
      if (process.env.BENCH_COPY_FLOOR !== '0') {
        const floorOf = async (args: string[]) => JSON.parse(await runChild(['bench/pg-files-floor.mjs', ...args], {})) as { rows: number; seconds: number; load_seconds: number; index_seconds: number; rows_per_sec: number; per_shard?: Array<{ rows: number; load_rows_per_sec: number }> };
        const floorOne = await floorOf([singleUrl, dataDir]);
        const floorThree = await floorOf([mainUrl, dataDir, ...servers.map((s) => s.url)]);
        console.log(`floor, one server: ${floorOne.seconds} s (load ${floorOne.load_seconds} s, indexes ${floorOne.index_seconds} s) = ${floorOne.rows_per_sec} rows/s; threatmon ${(one.seconds / floorOne.seconds).toFixed(2)}x its time`);
        console.log(`floor, three shards: ${floorThree.seconds} s (load ${floorThree.load_seconds} s, indexes ${floorThree.index_seconds} s) = ${floorThree.rows_per_sec} rows/s; per shard ${floorThree.per_shard?.map((p) => p.load_rows_per_sec).join(' / ')} rows/s while loading; threatmon ${(three.seconds / floorThree.seconds).toFixed(2)}x its time (load ${(three.load_seconds / floorThree.load_seconds).toFixed(2)}x)`);
        results.push(row(`floor, one server (rows/s)`, floorOne.rows_per_sec), row(`floor, three shards (rows/s)`, floorThree.rows_per_sec));
      }

      const s1 = await startServer('shards-single', {}, singleUrl);
      const s3 = await startServer('shards-main', shardsEnv, mainUrl);
      try {
        const conns = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
        const sample = JSON.parse(corpusHead(corpusFile(dataDir, 'source-07')).split('\n')[123] as string) as { email: string; username?: string };
        const idOf = async (s: typeof s1) => {
          const r = await fetch(`${s.url}/api/v1/leaks/search/?email=${encodeURIComponent(sample.email)}`, { headers: { authorization: `Bearer ${s.token}` } });
          return ((await r.json()) as { results: Array<{ id: string }> }).results[0]?.id as string;
        };
        const kinds: Array<[string, (s: typeof s1) => Promise<string>]> = [
          ['record by id', async (s) => `/leaks/records/${await idOf(s)}/`],
          ['e-mail (one shard)', async () => `/leaks/search/?email=${encodeURIComponent(sample.email)}`],
          ['username (every shard)', async () => '/leaks/search/?username=jennifer.smith'],
          ['domain with subdomains', async () => '/leaks/search/?domain=corp7.example'],
          ['full text', async () => '/leaks/search/?q=jennifer%20smith'],
          ['domain + has_password', async () => '/leaks/search/?domain=corp7.example&has_password=true'],
        ];
        for (const [kind, path] of kinds) {
          for (const [label, s] of [['one server', s1], ['three shards', s3]] as const) {
            results.push(await load(`${kind}, ${label} (${records})`, { url: `${s.url}/api/v1${await path(s)}`, headers: { authorization: `Bearer ${s.token}` }, connections: conns }));
          }
        }
      } finally {
        await stop(s1);
        await stop(s3);
      }
    } finally {
      for (const s of servers) s.remove();
    }
    return results;
  },
};
