/**
 * Load benchmarks: starts the real server (child process, embedded SQLite in a temp folder, or
 * PostgreSQL with BENCH_PG_URL) and drives it over loopback with wrk where it is installed
 * (`apt-get install wrk`), else with autocannon from this process (bench/wrk.ts).
 *
 *   npm run bench                      # every scenario, 10 s each, 32 connections
 *   npm run bench -- health me-memory  # only these scenarios
 *   npm run bench -- hibp              # Have I Been Pwned's breachedaccount, and API key against JWT
 *   npm run bench -- taxii             # TAXII 2.1: 10,000 indicators polled in pages of 1,000
 *   npm run bench -- notifications     # 1,000 alerts in one ingest with 5 channels: ingest rate, delivery time
 *   npm run bench -- feeds             # 100,000 indicators from a STIX bundle and from a list, beside a bare insert loop
 *   npm run bench -- console           # the console: first visit's bytes, inbox with 10,000 open alerts, search drawn (Chromium)
 *   BENCH_DURATION=5 BENCH_CONNECTIONS=16 npm run bench
 *   BENCH_WORKERS=1 npm run bench      # API processes (THREATMON_WORKERS); default: see workersFor()
 *   BENCH_LEAKS_DB_URL=postgres://... npm run bench -- leaks   # searches only, on a corpus imported before
 *   BENCH_LEAK_SOURCES=1 npm run bench -- leaks   # the corpus as one file of one source (default 50)
 *   BENCH_PG_URL=... BENCH_LEAK_RECORDS=10000000 BENCH_LEAK_DATA=/data/leaks-10M npm run bench -- corpus
 *                                      # bulk import beside the bare-COPY floor, disk per record, every search kind
 *   BENCH_LEAK_DATA=DIR npm run bench -- corpus   # on SQLite: the import beside both floors (the files, the database part)
 *   BENCH_MONITORING_DB=postgres://... BENCH_LEAK_DATA=DIR BENCH_BACKFILLS=emails npm run bench -- monitoring
 *                                      # backfills on a corpus imported before, the keyword's left out
 *   BENCH_PG_URL=... BENCH_LEAKS_DB_URL=... npm run bench -- replica   # searches with a streaming replica, its lag
 *
 * Each measured run follows an unrecorded warm-up of BENCH_WARMUP seconds (default 5), so the
 * figures are of a server whose code the JIT has compiled, not of its first second.
 *
 * Results are printed and written to bench/results/latest.json, with the host's speed before and
 * after (bench/host-speed.ts): compare figures only from runs at about the same reference.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONNECTIONS, DURATION, type Result, ROOT, WARMUP, WORKERS, workersFor } from './harness.js';
import { hostReference } from './host-speed.js';
import { basicsScenarios } from './scenarios/basics.js';
import { ceilingScenarios } from './scenarios/ceiling.js';
import { consoleScenarios } from './scenarios/console.js';
import { feedsScenarios } from './scenarios/feeds.js';
import { corpusScenarios } from './scenarios/corpus.js';
import { shardScenarios } from './scenarios/shards.js';
import { replicaScenarios } from './scenarios/replica.js';
import { dumpsScenarios } from './scenarios/dumps.js';
import { hibpScenarios } from './scenarios/hibp.js';
import { taxiiScenarios } from './scenarios/taxii.js';
import { notificationsScenarios } from './scenarios/notifications.js';
import { leaksScenarios } from './scenarios/leaks.js';
import { monitoringScenarios } from './scenarios/monitoring.js';
import { tokensScenarios } from './scenarios/tokens.js';
import { webhooksScenarios } from './scenarios/webhooks.js';
import { useWrk } from './wrk.js';

const scenarios: Record<string, () => Promise<Result[]>> = {
  ...leaksScenarios,
  ...corpusScenarios,
  ...shardScenarios,
  ...replicaScenarios,
  ...dumpsScenarios,
  ...hibpScenarios,
  ...taxiiScenarios,
  ...notificationsScenarios,
  ...monitoringScenarios,
  ...tokensScenarios,
  ...webhooksScenarios,
  ...consoleScenarios,
  ...feedsScenarios,
  ...ceilingScenarios,
  ...basicsScenarios,
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((w) => !(w in scenarios));
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
console.log(
  `threatmon bench: ${DURATION} s per scenario after ${WARMUP} s of warm-up, ${CONNECTIONS} connections, load by ${useWrk() ? 'wrk' : 'autocannon'}, ${os.cpus().length} cores, API workers ${WORKERS ?? `auto on SQLite, ${workersFor('postgres://127.0.0.1')} with PostgreSQL on this machine`}, ${process.env.BENCH_PG_URL ? 'PostgreSQL' : 'SQLite'}${process.env.BENCH_LEAKS_DB_URL ? ` (leak searches: ${process.env.BENCH_LEAKS_DB_URL.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}, BENCH_LEAKS_DB_URL)` : ''}\n`,
);
// The host's speed before and after, so that runs from other days (or hours) can be compared.
const hostBefore = hostReference();
console.log(`host reference before: ${hostBefore} ms (bench/host-speed.ts, a fixed workload on one core; lower is a faster host)\n`);
const results: Result[] = [];
for (const name of wanted.length ? wanted : Object.keys(scenarios)) results.push(...(await scenarios[name]!()));
const hostAfter = hostReference();
console.log(`\nhost reference after: ${hostAfter} ms`);
fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
fs.writeFileSync(
  path.join(ROOT, 'bench', 'results', 'latest.json'),
  `${JSON.stringify({ date: new Date().toISOString(), duration_s: DURATION, warmup_s: WARMUP, workers: WORKERS ?? 'default', connections: CONNECTIONS, loader: useWrk() ? 'wrk' : 'autocannon', database: process.env.BENCH_PG_URL ? 'postgres' : 'sqlite', leaks_database: process.env.BENCH_LEAKS_DB_URL?.replace(/\/\/[^@/]*@/, '//') ?? null, host_reference_ms: { before: hostBefore, after: hostAfter }, results }, null, 2)}\n`,
);
