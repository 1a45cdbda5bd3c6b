import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { MonitoringRepository } from '../../src/modules/monitoring/monitoring.repository.js';
import { corpusFiles, corpusHead } from '../corpus-files.mjs';
import { ADMIN_PASSWORD, apiOf, freshDatabaseUrl, load, type Result, ROOT, runChild, startFloor, startServer, stop } from '../harness.js';
import { drive } from '../wrk.js';
import { IMPORT_V8_FLAGS } from '../../bin/import-flags.js';

export const monitoringScenarios: Record<string, () => Promise<Result[]>> = {
  async monitoring() {
    const records = Number(process.env.BENCH_LEAK_RECORDS ?? 1_000_000);
    const monitors = Number(process.env.BENCH_MONITORS ?? 10_000);
    // BENCH_LEAK_DATA: the corpus's folder when it was generated elsewhere (the 10M and 100M ones).
    const dataDir = process.env.BENCH_LEAK_DATA ?? path.join(ROOT, 'bench', 'data', `leaks-${records}`);
    if (!fs.existsSync(dataDir)) await runChild(['bench/generate-leaks.ts', dataDir, String(records), '50'], {});
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    // BENCH_MONITORING_DB: a database that holds the corpus already (from an earlier run): the
    // imports are left out, the backfills and the alert list measured on it.
    const reuse = process.env.BENCH_MONITORING_DB;
    const plainUrl = reuse ?? (await freshDatabaseUrl('monitoring-plain'));
    const bulk = !plainUrl.startsWith('postgres');
    const importInto = async (dbUrl: string, extra: string[]) =>
      JSON.parse(
        await runChild(['bench/import-leaks.mjs', dataDir, ...(bulk ? ['--bulk'] : []), ...extra], { THREATMON_DATABASE_URL: dbUrl, THREATMON_LOG_LEVEL: 'warn', THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD }, IMPORT_V8_FLAGS),
      ) as { records_per_sec: number; peak_rss_mb: number; seconds: number; alerts?: number; monitors?: number; terms?: number };
    const results: Result[] = [];
    if (!reuse) {
      const without = await importInto(plainUrl, []);
      const withMonitors = await importInto(await freshDatabaseUrl('monitoring-watched'), ['--monitors', String(monitors)]);
      const ratio = withMonitors.records_per_sec / without.records_per_sec;
      console.log(`import-leaks${bulk ? ' --bulk' : ''} of ${records}: ${without.records_per_sec} records/s (RSS ${without.peak_rss_mb} MB) without monitors`);
      console.log(
        `  with ${withMonitors.monitors} monitors (${withMonitors.terms} terms): ${withMonitors.records_per_sec} records/s (RSS ${withMonitors.peak_rss_mb} MB), ${withMonitors.alerts} alerts = ${((100 * (withMonitors.alerts ?? 0)) / records).toFixed(2)}% of records; ${(100 * ratio).toFixed(0)}% of the rate (target at least 50%, RSS under 250 MB)`,
      );
      results.push(
        { scenario: `import ${records} without monitors (records/s)`, requests_per_sec: without.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: without.peak_rss_mb } as Result,
        { scenario: `import ${records} with ${monitors} monitors (records/s)`, requests_per_sec: withMonitors.records_per_sec, latency_p50_ms: 0, latency_p99_ms: 0, non_2xx: 0, errors: 0, peak_rss_mb: withMonitors.peak_rss_mb, alerts: withMonitors.alerts } as Result,
      );
    }

    // Backfills, on the corpus without monitors.
    const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: plainUrl }));
    const db = deps.database.db;
    const near2000 = await db.selectFrom('leak_domain_counts').select(['key', 'n']).where('n', '>=', 1500).where('n', '<=', 2500).orderBy('n').limit(1).executeTakeFirst();
    await deps.database.close();
    const domain = near2000 ? near2000.key.slice(0, -1).split('.').reverse().join('.') : 'corp20.example';
    // The first 500 e-mails of the twelfth file (plain or gzipped): addresses the corpus holds.
    const emails = corpusHead(path.join(dataDir, corpusFiles(dataDir)[11] as string))
      .split('\n')
      .slice(0, 500)
      .map((l) => (JSON.parse(l) as { email: string }).email);
    // BENCH_BACKFILLS=emails: only these of the last two backfills (a keyword reads the whole corpus);
    // the domain's always runs, as the alert list below is seeded on its monitor.
    const backfills = process.env.BENCH_BACKFILLS?.split(',').filter(Boolean) ?? ['emails', 'keyword'];
    const s = await startServer('monitoring', {}, plainUrl);
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const source = await api('POST', '/leaks/sources/', { name: `During the scan ${Date.now()}` });
      const backfill = async (label: string, body: object, whileScanning?: () => Promise<string>) => {
        const started = Date.now();
        const monitor = await api('POST', '/monitoring/', { name: label, ...body });
        const during = whileScanning ? whileScanning() : Promise.resolve('');
        let scan: { status: string; started_at: string; finished_at: string; records_scanned: number; alerts_raised: number };
        for (;;) {
          [scan] = (await api('GET', `/monitoring/${monitor.id}/scans/`)).results;
          if (scan.status === 'completed') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const seconds = (Date.parse(scan.finished_at) - Date.parse(scan.started_at)) / 1000;
        console.log(`backfill ${label}: ${seconds.toFixed(2)} s running (${((Date.now() - started) / 1000).toFixed(2)} s from the POST), ${scan.records_scanned} records read, ${scan.alerts_raised} alerts${await during}`);
        results.push({ scenario: `backfill ${label} (s)`, requests_per_sec: 0, latency_p50_ms: 0, latency_p99_ms: Math.round(seconds * 1000), non_2xx: 0, errors: 0 });
        return monitor;
      };
      const domainMonitor = await backfill(`domain ${domain} (${near2000?.n ?? '?'} records)`, { type: 'domain', terms: [domain] });
      if (backfills.includes('emails')) await backfill('500 e-mails', { type: 'email', terms: emails });
      // While a keyword reads the whole corpus: the API's latency, and ingests' (writes go on).
      if (backfills.includes('keyword')) await backfill('keyword "jennifer smith"', { type: 'keyword', terms: ['jennifer smith'] }, async () => {
        let n = 0;
        const ingests: number[] = [];
        const writer = (async () => {
          for (let i = 0; i < 20; i++) {
            const t0 = Date.now();
            await api('POST', `/leaks/sources/${source.id}/records/`, Array.from({ length: 50 }, () => ({ email: `during${n++}@scan.example` })));
            ingests.push(Date.now() - t0);
          }
        })();
        const r = await drive({ url: `${s.url}/api/v1/monitoring/`, headers, connections: 8, duration: 10 });
        await writer;
        return `; meanwhile GET /monitoring/ at 8 connections: ${r.requests_per_sec} req/s, p99 ${r.latency_p99_ms} ms, errors ${r.non_2xx}; 20 ingests of 50 records: slowest ${Math.max(...ingests)} ms`;
      });

      // 100,000 alerts in one organization (the admin's), over the corpus's first records.
      const seedDeps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: plainUrl }));
      try {
        const sdb = seedDeps.database.db;
        const ids = (await sdb.selectFrom('leak_records').select('id').orderBy('id').limit(100_000).execute()).map((r) => r.id);
        const statuses = ['new', 'acknowledged', 'resolved', 'false_positive'];
        const severities = ['low', 'medium', 'high', 'critical'];
        const base = Date.now() - 90 * 86_400_000;
        const orgId = domainMonitor.created_by ? (await sdb.selectFrom('users').select('organization_id').where('id', '=', domainMonitor.created_by).executeTakeFirstOrThrow()).organization_id : '';
        // Written as the matcher writes them (each keeping its record's JSON), without their events.
        const alerts = new MonitoringRepository(seedDeps.database.dialect);
        for (let i = 0; i < ids.length; i += 1000) {
          await alerts.insertAlerts(
            sdb,
            ids.slice(i, i + 1000).map((id, j) => {
              const k = i + j;
              const at = new Date(base + k * 60_000).toISOString();
              return { id: seedDeps.newId(), organization_id: orgId, monitor_id: domainMonitor.id, leak_record_id: id, matched_term: `bench-${k}`, matched_field: 'domain', severity: severities[k % 4] as string, status: statuses[Math.floor(k / 4) % 4] as string, note: '', incident_id: null, created_at: at, updated_at: at };
            }),
          );
        }
        // As autovacuum would soon after so many inserts: the count reads the index alone.
        if (seedDeps.database.dialect === 'postgres') await sdb.executeQuery(CompiledQuery.raw('vacuum analyze monitor_alerts'));
      } finally {
        await seedDeps.database.close();
      }
      const alertsPath = '/api/v1/monitoring/alerts/?status=new&severity=high';
      results.push(await load('GET /monitoring/alerts/?status=new&severity=high (100000 alerts)', { url: `${s.url}${alertsPath}`, headers }));
      // The same page from the floor server: what this machine allows before threatmon's own work.
      const floor = await startFloor(s, alertsPath.slice(7));
      try {
        results.push(await load('  floor: the same page, same SQL, JSON and headers', { url: `${floor.url}${alertsPath}` }));
      } finally {
        await floor.stop();
      }
    } finally {
      await stop(s);
    }
    return results;
  },
  /**
   * Tracking tokens: the trigger of a live web_bug against an unknown key (alternating rounds: the
   * two must look alike), a flood of one token beside the incident list, and the token list and a
   * timeline over 100,000 exposures.
   */
};
