import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { corpusFile, corpusHead } from '../corpus-files.mjs';
import { ADMIN_PASSWORD, databaseUrl, load, type Result, ROOT, runChild, startServer, stop } from '../harness.js';
import { IMPORT_V8_FLAGS } from '../../bin/import-flags.js';

/**
 * The bench leak corpus (BENCH_LEAK_RECORDS, default 1,000,000, in BENCH_LEAK_SOURCES files and
 * sources), generated once into bench/data and imported into a new database, or the database of
 * BENCH_LEAKS_DB_URL that holds it already (then `imported` is null).
 */
export async function leakCorpus(): Promise<{ records: number; dataDir: string; dbUrl: string; bulk: boolean; imported: { records: number; files: number; seconds: number; records_per_sec: number; peak_rss_mb: number; load_seconds: number; rebuild_ms: unknown } | null }> {
  const records = Number(process.env.BENCH_LEAK_RECORDS ?? 1_000_000);
  // One source per file. BENCH_LEAK_SOURCES=1: the whole corpus in one file and one source, as
  // when a single large leak is imported (see the README on what that costs).
  const sources = Number(process.env.BENCH_LEAK_SOURCES ?? 50);
  if (!Number.isInteger(sources) || sources < 1) throw new Error(`BENCH_LEAK_SOURCES must be a positive integer, not ${process.env.BENCH_LEAK_SOURCES}`);
  // BENCH_LEAK_DATA: a folder of the corpus generated elsewhere (the 10M and 100M ones live outside the repository).
  const dataDir = process.env.BENCH_LEAK_DATA ?? path.join(ROOT, 'bench', 'data', sources === 50 ? `leaks-${records}` : `leaks-${records}-${sources}-sources`);
  if (!fs.existsSync(dataDir)) await runChild(['bench/generate-leaks.ts', dataDir, String(records), String(sources)], {});
  // BENCH_LEAKS_DB_URL: a database that already holds the corpus (from an earlier run), to measure
  // searches again without importing; the import figure is then left out.
  const reuse = process.env.BENCH_LEAKS_DB_URL;
  const dbUrl = reuse ?? databaseUrl('leaks');
  // The importer runs the compiled CLI code (dist/), as `threatmon import-leaks` does.
  await new Promise((resolve, reject) =>
    spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
  );
  // One bulk load (import-leaks --bulk) around the files unless BENCH_IMPORT=plain.
  const bulk = process.env.BENCH_IMPORT !== 'plain';
  const imported = reuse
    ? null
    : JSON.parse(
        // With the heap limit bin/threatmon.js gives import-leaks.
        await runChild(['bench/import-leaks.mjs', dataDir, ...(bulk ? ['--bulk'] : [])], { THREATMON_DATABASE_URL: dbUrl, THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD }, IMPORT_V8_FLAGS),
      );
  if (imported) {
    console.log(
      `import-leaks${bulk ? ' --bulk' : ''}: ${imported.records} records from ${imported.files} files in ${imported.seconds} s = ${imported.records_per_sec} records/s, peak RSS ${imported.peak_rss_mb} MB` +
        (bulk ? ` (loading ${imported.load_seconds} s, then indexes ${Number((imported.seconds - imported.load_seconds).toFixed(1))} s)` : ''),
    );
    if (bulk) console.log(`  index rebuild (ms): ${JSON.stringify(imported.rebuild_ms)}`);
  }
  return { records, dataDir, dbUrl, bulk, imported };
}

export const leaksScenarios: Record<string, () => Promise<Result[]>> = {
  async leaks() {
    const { records, dataDir, dbUrl, bulk, imported } = await leakCorpus();
    const s = await startServer('leaks', {}, dbUrl);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const conns = Number(process.env.BENCH_SEARCH_CONNECTIONS ?? 16);
      const sample = JSON.parse(corpusHead(corpusFile(dataDir, 'source-07')).split('\n')[123] as string) as { email: string };
      const q = (qs: string) => ({ url: `${s.url}/api/v1/leaks/search/?${qs}`, headers: auth, connections: conns });
      return [
        ...(imported
          ? [{ scenario: `import-leaks${bulk ? ' --bulk' : ''} (records/s)`, requests_per_sec: imported.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: imported.peak_rss_mb } as Result]
          : []),
        await load(`search email (${records})`, q(`email=${encodeURIComponent(sample.email)}`)),
        await load(`search domain (${records})`, q('domain=corp7.example')),
        await load(`search ip CIDR /16 (${records})`, q('ip=10.20.0.0/16')),
        await load(`search q full text (${records})`, q('q=%22jennifer%20smith%22')),
        await load(`search q prefix (${records})`, q('q=robins*%20jam*')),
        await load(`search domain gmail.com, the largest (${records})`, q('domain=gmail.com')),
      ];
    } finally {
      await stop(s);
    }
  },
  /**
   * Monitoring at corpus scale (issue figures): the 1M-record import with and without 10,000
   * active monitors (100 organizations; SQLite --bulk, PostgreSQL plain), backfill scans of a
   * domain of about 2,000 records, of 500 e-mails and of a keyword, with the API's latency while
   * the keyword scan runs, and the alert list over 100,000 alerts of one organization.
   */
};
