import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ADMIN_PASSWORD, apiOf, databaseUrl, freshDatabaseUrl, type Result, ROOT, runChild, startServer, stop } from '../harness.js';
import { IMPORT_V8_FLAGS } from '../../bin/import-flags.js';

/** What bench/import-leaks.mjs reports for one file. */
interface Imported {
  records: number;
  rejected: number;
  windows1252_lines: number;
  seconds: number;
  records_per_sec: number;
  peak_rss_mb: number;
}

/** Imports `file` with --bulk into a new SQLite database, as `threatmon import-leaks` runs (compiled, bounded heap). */
async function importFile(file: string): Promise<Imported & { accepted_per_sec: number }> {
  const r = JSON.parse(
    await runChild(['bench/import-leaks.mjs', file, '--bulk'], { THREATMON_DATABASE_URL: databaseUrl('dumps'), THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD }, IMPORT_V8_FLAGS),
  ) as Imported;
  return { ...r, accepted_per_sec: Math.round((r.records - r.rejected) / r.seconds) };
}

export const dumpsScenarios: Record<string, () => Promise<Result[]>> = {
  /**
   * Real dumps (issue "Real dumps as they come"): a gzipped combolist of BENCH_DUMP_RECORDS lines
   * (default 10,000,000; 5% junk, about 10% Windows-1252) against the NDJSON of the same records,
   * each with import-leaks --bulk on SQLite: records stored per second and peak RSS. Then the first
   * BENCH_DUMP_API_LINES lines (default 2,000,000) through the API as text/plain bodies of 64 MiB, on
   * SQLite, or PostgreSQL with BENCH_PG_URL.
   */
  async dumps() {
    const records = Number(process.env.BENCH_DUMP_RECORDS ?? 10_000_000);
    const dir = path.join(ROOT, 'bench', 'data', `dumps-${records}`);
    if (!fs.existsSync(path.join(dir, 'records.ndjson'))) await runChild(['bench/generate-combolist.ts', dir, String(records)], {});
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    const results: Result[] = [];
    if (!process.env.BENCH_PG_URL) {
      const combo = await importFile(path.join(dir, 'combo.txt.gz'));
      const ndjson = await importFile(path.join(dir, 'records.ndjson'));
      console.log(`combolist (gzip) --bulk: ${combo.records} lines, ${combo.rejected} rejected, ${combo.windows1252_lines} Windows-1252, ${combo.seconds} s, ${combo.accepted_per_sec} records stored/s, peak RSS ${combo.peak_rss_mb} MB`);
      console.log(`NDJSON of the same records --bulk: ${ndjson.records} records, ${ndjson.seconds} s, ${ndjson.accepted_per_sec} records stored/s, peak RSS ${ndjson.peak_rss_mb} MB`);
      console.log(`combolist / NDJSON: ${((combo.accepted_per_sec / ndjson.accepted_per_sec) * 100).toFixed(1)}% (target >= 90%, RSS < 300 MB)`);
      const row = (scenario: string, r: { accepted_per_sec: number; peak_rss_mb: number }): Result => ({ scenario, requests_per_sec: r.accepted_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: r.peak_rss_mb });
      results.push(row(`import-leaks --bulk combolist.gz (${records} lines, records/s)`, combo), row(`import-leaks --bulk NDJSON, same records (records/s)`, ndjson));
    }
    // Through the API: text/plain bodies of up to 64 MiB, cut at line ends, one after another.
    const apiLines = Number(process.env.BENCH_DUMP_API_LINES ?? 2_000_000);
    const s = await startServer('dumps-api', {}, await freshDatabaseUrl('dumps-api'));
    try {
      const api = apiOf(s);
      const source = (await api('POST', '/leaks/sources/', { name: 'Pasted combolist' })) as { id: string };
      const text = zlib.gunzipSync(fs.readFileSync(path.join(dir, 'combo.txt.gz')));
      let end = 0;
      for (let n = 0; n < apiLines && end < text.length; n++) end = text.indexOf(10, end) + 1 || text.length;
      const LIMIT = 64 * 1024 * 1024 - 1;
      const started = Date.now();
      let stored = 0;
      for (let at = 0; at < end; ) {
        const cut = Math.min(end, at + LIMIT);
        const to = cut === end ? end : text.lastIndexOf(10, cut - 1) + 1;
        const res = await fetch(`${s.url}/api/v1/leaks/sources/${source.id}/records/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.token}`, 'content-type': 'text/plain' },
          body: text.subarray(at, to),
        });
        const body = (await res.json()) as { accepted: number; duplicates: number };
        if (res.status !== 200) throw new Error(`text/plain ingest answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
        stored += body.accepted + body.duplicates;
        at = to;
      }
      const seconds = (Date.now() - started) / 1000;
      const rate = Math.round(stored / seconds);
      console.log(`API text/plain (${process.env.BENCH_PG_URL ? 'PostgreSQL' : 'SQLite'}): ${stored} records of ${apiLines} lines in ${seconds.toFixed(1)} s = ${rate} records/s`);
      results.push({ scenario: `POST records text/plain, 64 MiB bodies (${apiLines} lines, records/s)`, requests_per_sec: rate, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0 });
    } finally {
      await stop(s);
    }
    return results;
  },
};
