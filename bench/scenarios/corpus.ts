import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { corpusFiles, corpusHead } from '../corpus-files.mjs';
import { apiOf, load, type Result, runChild, startFloor, startServer, stop } from '../harness.js';
import { leakCorpus } from './leaks.js';

interface Sample {
  email?: string;
  username?: string;
  phone?: string;
  ip?: string;
}

/** The first record of the corpus's files that has `field`: searches for values that exist. */
function sampleWith(dataDir: string, field: keyof Sample): string {
  for (const f of corpusFiles(dataDir).slice(7)) {
    const lines = corpusHead(path.join(dataDir, f)).split('\n').slice(100, -1);
    for (const line of lines) {
      const v = (JSON.parse(line) as Sample)[field];
      if (v) return v;
    }
  }
  throw new Error(`no record with ${field} in ${dataDir}`);
}

/** On-disk size of the records table with its indexes and TOAST, and of each index (PostgreSQL). */
async function pgSizes(dbUrl: string) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ total: string; heap: string; n: string }>(
      `select pg_total_relation_size('leak_records') as total, pg_relation_size('leak_records') as heap, (select reltuples::bigint from pg_class where oid = 'leak_records'::regclass) as n`,
    );
    const idx = await client.query<{ name: string; bytes: string }>(
      `select indexrelid::regclass::text as name, pg_relation_size(indexrelid) as bytes from pg_index where indrelid = 'leak_records'::regclass order by 2 desc`,
    );
    const r = rows[0] as { total: string; heap: string; n: string };
    return { total_bytes: Number(r.total), heap_bytes: Number(r.heap), records: Number(r.n), indexes_mb: Object.fromEntries(idx.rows.map((i) => [i.name, Math.round(Number(i.bytes) / 1048576)])) };
  } finally {
    await client.end();
  }
}

/** A floor script's figures (bench/copy-floor.mjs, bench/sqlite-floor.mjs, bench/sqlite-files-floor.mjs: one JSON line). */
async function importFloor(script: string, ...args: string[]) {
  return JSON.parse(await runChild([script, ...args], {}, [])) as { rows: number; seconds: number; rows_per_sec: number; load_seconds?: number; index_seconds?: number };
}

/**
 * PostgreSQL: waits until no statement of another session runs on the database (at most `maxMs`),
 * and returns how long that took. A search the load gave up on still runs in the database after
 * its client has gone: without this, the next search measured would queue behind it.
 */
async function drained(dbUrl: string, maxMs = 300_000): Promise<number> {
  if (!dbUrl.startsWith('postgres')) return 0;
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  const started = Date.now();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: string }>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      if (Number(rows[0]?.n) === 0 || Date.now() - started > maxMs) return Date.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

export const corpusScenarios: Record<string, () => Promise<Result[]>> = {
  /**
   * The corpus at scale (BENCH_LEAK_RECORDS, files from BENCH_LEAK_DATA when set): the bulk import,
   * beside its floor (PostgreSQL: bench/pg-files-floor.mjs, the whole work done bare, and a bare COPY of the same rows into a table with the same indexes;
   * SQLite: bench/sqlite-files-floor.mjs and bench/sqlite-floor.mjs; BENCH_COPY_FLOOR=0 to skip them), the disk per record, and each kind of search at
   * BENCH_SEARCH_CONNECTIONS (16).
   */
  async corpus() {
    const { records, dataDir, dbUrl, bulk, imported } = await leakCorpus();
    const results: Result[] = [];
    const row = (scenario: string, value: number, extra: Partial<Result> = {}) => ({ scenario, requests_per_sec: value, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, ...extra }) as Result;
    if (imported) results.push(row(`import-leaks${bulk ? ' --bulk' : ''} ${records} (records/s)`, imported.records_per_sec, { peak_rss_mb: imported.peak_rss_mb }));
    if (dbUrl.startsWith('postgres')) {
      if (process.env.BENCH_COPY_FLOOR !== '0') {
        // The whole work first (the same files read, normalised, keyed and COPYed into an unindexed
        // table, then leak_records' own CREATE INDEX statements), then the database's part alone.
        const files = await importFloor('bench/pg-files-floor.mjs', dbUrl, dataDir);
        console.log(`floor: a bare import of the same files (COPY into no index, then the same CREATE INDEX statements): ${files.seconds} s (load ${files.load_seconds} s, indexes ${files.index_seconds} s) = ${files.rows_per_sec} rows/s${imported ? `; threatmon ${imported.seconds} s (load ${imported.load_seconds} s), ${(imported.seconds / files.seconds).toFixed(2)}x` : ''}`);
        results.push(row('floor: bare import of the same files, COPY then the same indexes (rows/s)', files.rows_per_sec));
        const floor = await importFloor('bench/copy-floor.mjs', dbUrl);
        console.log(`floor: bare COPY of the same ${floor.rows} rows into a table with the same indexes: ${floor.seconds} s = ${floor.rows_per_sec} rows/s`);
        results.push(row('floor: bare COPY, same rows and indexes (rows/s)', floor.rows_per_sec));
      }
      const sizes = await pgSizes(dbUrl);
      console.log(`disk: ${(sizes.total_bytes / 1e9).toFixed(2)} GB for ${sizes.records} records = ${Math.round(sizes.total_bytes / sizes.records)} bytes/record (table ${Math.round(sizes.heap_bytes / sizes.records)}); indexes (MB): ${JSON.stringify(sizes.indexes_mb)}`);
      results.push(row('disk per record (bytes)', Math.round(sizes.total_bytes / sizes.records)));
    } else {
      const file = dbUrl.slice('sqlite:'.length);
      // Measured before the file grows to the floor's high-water mark: the disk figure is the corpus's.
      const bytes = fs.statSync(file).size;
      if (process.env.BENCH_COPY_FLOOR !== '0') {
        // The whole work first (the same files read, parsed, normalised and stored by a bare two-thread
        // loop), then the database's part alone (the stored rows copied by SQLite, nothing read).
        const files = await importFloor('bench/sqlite-files-floor.mjs', file, dataDir);
        console.log(`floor: a bare import of the same files into a table with the same indexes and full-text index: ${files.seconds} s (load ${files.load_seconds} s) = ${files.rows_per_sec} rows/s`);
        results.push(row('floor: bare import of the same files, same indexes (rows/s)', files.rows_per_sec));
        const floor = await importFloor('bench/sqlite-floor.mjs', file);
        console.log(`floor of the database's part: SQLite copying the same ${floor.rows} stored rows into a table with the same indexes and full-text index: ${floor.seconds} s = ${floor.rows_per_sec} rows/s`);
        results.push(row('floor: SQLite copy, same rows and indexes (rows/s)', floor.rows_per_sec));
      }
      console.log(`disk: ${(bytes / 1e9).toFixed(2)} GB for ${records} records = ${Math.round(bytes / records)} bytes/record`);
      results.push(row('disk per record (bytes)', Math.round(bytes / records)));
    }
    const s = await startServer('corpus', {}, dbUrl);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const conns = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
      const api = apiOf(s);
      const sources = (await api('GET', '/leaks/sources/?page_size=1')) as { results: Array<{ id: string }> };
      const ip = sampleWith(dataDir, 'ip');
      const q = (qs: string) => ({ url: `${s.url}/api/v1/leaks/search/?${qs}`, headers: auth, connections: conns });
      const kinds: Array<[string, string]> = [
        ['email', `email=${encodeURIComponent(sampleWith(dataDir, 'email'))}`],
        ['username', `username=${encodeURIComponent(sampleWith(dataDir, 'username'))}`],
        ['phone', `phone=${encodeURIComponent(sampleWith(dataDir, 'phone'))}`],
        ['domain with subdomains', 'domain=corp7.example'],
        ['ip', `ip=${ip}`],
        ['ip CIDR /24', `ip=${ip.split('.').slice(0, 3).join('.')}.0/24`],
        ['full text', 'q=jennifer%20smith'],
        ['phrase', 'q=%22jennifer%20smith%22'],
        ['prefix', 'q=robins*%20jam*'],
        ['one common word (count stops at 10,000)', 'q=robinson'],
        ['source', `source=${sources.results[0]?.id}`],
        ['has_password + domain', 'domain=corp7.example&has_password=true'],
        ['leaked_after + domain', 'domain=corp7.example&leaked_after=2024-01-01T00:00:00Z'],
      ];
      // BENCH_SEARCHES=full,phrase measures only the searches whose names contain one of them.
      const only = process.env.BENCH_SEARCHES?.split(',').filter(Boolean);
      const measured = only ? kinds.filter(([kind]) => only.some((o) => kind.includes(o))) : kinds;
      // The floor of each search: the same plan and statements from a bare node:http server
      // (bench/floor-server.ts), measured beside it. BENCH_SEARCH_FLOOR=0 leaves it out.
      const floor = process.env.BENCH_SEARCH_FLOOR === '0' ? null : await startFloor(s, `/leaks/search/?${kinds[0]?.[1]}`);
      try {
        const settle = async () => {
          const ms = await drained(dbUrl);
          if (ms > 1000) console.log(`  (${(ms / 1000).toFixed(1)} s until the searches given up on had ended in the database)`);
        };
        for (const [kind, qs] of measured) {
          results.push(await load(`search ${kind} (${records})`, q(qs)));
          await settle();
          if (floor) results.push(await load('  the same on the floor server', { ...q(qs), url: `${floor.url}/api/v1/leaks/search/?${qs}` }));
          if (floor) await settle();
        }
      } finally {
        await floor?.stop();
      }
    } finally {
      await stop(s);
    }
    return results;
  },
};
