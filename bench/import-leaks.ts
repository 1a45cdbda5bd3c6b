/**
 * Imports every NDJSON file of a folder (one leak source each) with the CLI's import path, in one
 * process, and reports records/s and the peak RSS.  tsx bench/import-leaks.ts DIR
 */
import fs from 'node:fs';
import path from 'node:path';
import { createServices } from '../src/app.js';
import { importLeaks } from '../src/cli/import-leaks.js';
import { loadConfig } from '../src/config.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createDeps } from '../src/deps.js';

const dir = process.argv[2] ?? 'bench/data/leaks';
const deps = createDeps(loadConfig(process.env));
await migrateToLatest(deps.database.db);
const services = createServices(deps);
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ndjson')).sort();
const started = Date.now();
let records = 0;
let peakRss = 0;
const sample = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 200);
for (const f of files) {
  const r = await importLeaks(services.leaks, { file: path.join(dir, f), source: `Bench ${f.replace(/\.ndjson$/, '')}`, createSource: true, progress: false, out: fs.createWriteStream('/dev/null') as never });
  records += r.accepted + r.duplicates + r.rejected.length;
}
clearInterval(sample);
peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
const seconds = (Date.now() - started) / 1000;
console.log(JSON.stringify({ files: files.length, records, seconds: Number(seconds.toFixed(1)), records_per_sec: Math.round(records / seconds), peak_rss_mb: Math.round(peakRss / 1048576) }));
await deps.database.close();
