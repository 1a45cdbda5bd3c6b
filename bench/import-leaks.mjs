/**
 * Imports every NDJSON file of a folder (one leak source each) with the CLI's import path, in one
 * process, and reports records/s and the peak RSS.  node bench/import-leaks.mjs DIR [--bulk] [--monitors N]
 *
 * With --monitors N, N active monitors (bench/seed-monitors.mjs) are in the database first: every
 * record is matched against them, and the alerts raised are reported.
 *
 * With --bulk, one bulk load spans every file, as `import-leaks --bulk` does for one: the
 * search indexes are set aside first and rebuilt after the last file, and that rebuild is inside
 * the measured time. `load_seconds` is the time up to the end of the last file, before that rebuild
 * (and the checkpoint that follows it).
 */
import fs from 'node:fs';
import path from 'node:path';

// Plain JavaScript over the compiled code in dist/ (npm run build), so the process measured is
// what `threatmon import-leaks` runs: no TypeScript loader in it or in its reader workers.
import { createServices } from '../dist/app.js';
import { importLeaks } from '../dist/cli/import-leaks.js';
import { loadConfig } from '../dist/config.js';
import { prepareDatabase } from '../dist/db/prepare.js';
import { createDeps } from '../dist/deps.js';
import { corpusFiles, corpusSourceName } from './corpus-files.mjs';
import { seedMonitors } from './seed-monitors.mjs';

const dir = process.argv[2] ?? 'bench/data/leaks';
const bulk = process.argv.includes('--bulk');
const deps = createDeps(loadConfig(process.env));
await prepareDatabase(deps.database);
const services = createServices(deps);
const monitorsArg = process.argv.indexOf('--monitors');
const seeded = monitorsArg > 0 ? await seedMonitors(deps, services, dir, Number(process.argv[monitorsArg + 1])) : null;
// A folder: its NDJSON files (plain or gzipped), one source each. A file (any format import-leaks reads): that file alone.
const single = fs.statSync(dir).isFile();
const folder = single ? path.dirname(dir) : dir;
const files = single ? [path.basename(dir)] : corpusFiles(dir);
let windows1252Lines = 0;
let rejectedLines = 0;
const started = Date.now();
let records = 0;
let peakRss = 0;
const sample = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 200);
if (bulk) await services.leaks.bulk.begin();
for (const f of files) {
  const r = await importLeaks(services.leaks, { file: path.join(folder, f), source: `Bench ${corpusSourceName(f)}`, createSource: true, progress: false, afterLargeLoad: false, out: fs.createWriteStream('/dev/null') });
  const rejected = r.rejected.length + (r.rejected_not_listed ?? 0);
  records += r.accepted + r.duplicates + rejected;
  rejectedLines += rejected;
  windows1252Lines += r.windows1252Lines;
}
const loadSeconds = (Date.now() - started) / 1000;
const steps = {};
// As import-leaks --bulk ends it: rebuilt here, unless another import is still loading (see endBulkLoad).
if (bulk) await services.leaks.bulk.end((step, ms) => (steps[step] = ms));
// Once for the whole load, as import-leaks does after one large file (VACUUM ANALYZE on PostgreSQL).
await services.leaks.afterLargeLoad();
clearInterval(sample);
peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
const seconds = (Date.now() - started) / 1000;
const alerts = seeded ? Number((await deps.database.db.selectFrom('monitor_alerts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) : 0;
console.log(JSON.stringify({ ...(seeded && { ...seeded, alerts }), files: files.length, records, rejected: rejectedLines, windows1252_lines: windows1252Lines, seconds: Number(seconds.toFixed(1)), load_seconds: Number(loadSeconds.toFixed(1)), records_per_sec: Math.round(records / seconds), peak_rss_mb: Math.round(peakRss / 1048576), bulk, rebuild_ms: steps }));
await deps.database.close();
