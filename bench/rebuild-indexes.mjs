/**
 * Times the end of a bulk load on a corpus already stored: the search indexes are set aside as a
 * bulk load's start does, then built again as its end does (each index's time, and the whole).
 * What changes the rebuild is measured on the same corpus without importing it again.
 *   THREATMON_DATABASE_URL=... node bench/rebuild-indexes.mjs   -> {"seconds", "steps"}
 * Run after `npm run build`. Searches stay correct meanwhile, only slower.
 */
import { createServices } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { createDeps } from '../dist/deps.js';

const deps = createDeps(loadConfig(process.env));
const leaks = createServices(deps).leaks;
await leaks.bulk.begin();
const steps = {};
const started = Date.now();
await leaks.bulk.end((step, ms) => (steps[step] = ms));
console.log(JSON.stringify({ seconds: (Date.now() - started) / 1000, steps }));
await deps.database.close();
