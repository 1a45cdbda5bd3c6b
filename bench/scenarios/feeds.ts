import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createDeps } from '../../src/deps.js';
import { apiOf, freshDatabaseUrl, type Result, startServer, stop } from '../harness.js';

const INDICATORS = Number(process.env.BENCH_FEED_INDICATORS ?? 100_000);
const CHUNK = 500;

const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/** The same indicators inserted by a bare loop: rows and their feed links, 500 a statement, one transaction. */
async function floor(values: string[]): Promise<number> {
  const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: await freshDatabaseUrl('feeds-floor') }));
  try {
    await migrateToLatest(deps.database.db);
    const db = deps.database.db;
    const org = randomUUID();
    const at = new Date().toISOString();
    await db.insertInto('organizations').values({ id: org, name: `floor ${org}`, plan: 'enterprise', created_at: at, updated_at: at }).execute();
    const feed = randomUUID();
    await db.insertInto('feeds').values({ id: feed, organization_id: org, name: 'floor', kind: 'csv', url: 'http://x/', options: '{}', auth: null, interval_seconds: 3600, is_active: false, cursor: null, next_pull_at: at, lease_until: null, last_pull_at: null, last_success_at: null, last_error: null, reject_examples: '[]', created_by: null, created_at: at, updated_at: at }).execute();
    const began = performance.now();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < values.length; i += CHUNK) {
        const rows = values.slice(i, i + CHUNK).map((value) => ({ id: randomUUID(), organization_id: org, type: 'ipv4', value, stix_id: null, name: null, confidence: null, tlp: null, labels: '[]', valid_until: null, modified: null, revoked: false, false_positive: false, note: null, first_seen: at, last_seen: at, created_at: at, updated_at: at }));
        await trx.insertInto('indicators').values(rows).execute();
        await trx.insertInto('indicator_feeds').values(rows.map((r) => ({ indicator_id: r.id, feed_id: feed, first_seen: at, last_seen: at }))).execute();
      }
    });
    return performance.now() - began;
  } finally {
    await deps.database.close();
  }
}

/**
 * Feeds (issue figures): a 100,000-indicator STIX bundle and a 100,000-line list, each pulled by a
 * new feed of a running server (from its sync to its last_pull_at), beside the same rows inserted
 * by a bare loop into the same database kind. The goal: within 2x of the loop.
 */
export const feedsScenarios: Record<string, () => Promise<Result[]>> = {
  async feeds() {
    const values = Array.from({ length: INDICATORS }, (_, i) => ipOf(i + 1));
    const bundle = JSON.stringify({
      type: 'bundle',
      id: `bundle--${randomUUID()}`,
      objects: values.map((v, i) => ({ type: 'indicator', spec_version: '2.1', id: `indicator--${randomUUID()}`, created: '2026-11-01T00:00:00.000Z', modified: '2026-11-01T00:00:00.000Z', pattern: `[ipv4-addr:value = '${v}']`, pattern_type: 'stix', valid_from: '2026-11-01T00:00:00Z', name: `ioc ${i}` })),
    });
    const list = `${values.join('\n')}\n`;
    const files = new Map([
      ['/bundle.json', bundle],
      ['/list.txt', list],
    ]);
    const server = http.createServer((req, res) => res.end(files.get(req.url ?? '') ?? ''));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const feedBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const results: Result[] = [];
    try {
      const bare = await floor(values);
      console.log(`feeds: ${INDICATORS.toLocaleString()} indicators by a bare insert loop: ${bare.toFixed(0)} ms (${Math.round((INDICATORS / bare) * 1000).toLocaleString()}/s)`);
      for (const [kind, path] of [
        ['stix', '/bundle.json'],
        ['csv', '/list.txt'],
      ] as const) {
        // A server and database each, so that every indicator is new to it.
        const s = await startServer(`feeds-${kind}`, { THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' }, await freshDatabaseUrl(`feeds-${kind}`));
        const api = apiOf(s);
        const began = performance.now();
        const feed = await api('POST', '/feeds/', { name: `bench ${kind} ${Date.now()}`, kind, url: `${feedBase}${path}`, interval_seconds: 604800 });
        let state = feed;
        while (state.last_pull_at === null) {
          await new Promise((r) => setTimeout(r, 200));
          state = await api('GET', `/feeds/${feed.id}/`);
        }
        const ms = performance.now() - began;
        if (state.last_error) throw new Error(`feeds bench: the ${kind} pull failed: ${state.last_error}`);
        console.log(`feeds: ${kind} of ${INDICATORS.toLocaleString()}: ${state.indicators_added.toLocaleString()} added in ${ms.toFixed(0)} ms (${Math.round((INDICATORS / ms) * 1000).toLocaleString()}/s), ${(ms / bare).toFixed(2)}x the bare loop (goal: 2x)`);
        results.push({ scenario: `feeds ${kind} pull of ${INDICATORS} (ms; p99 column: bare loop ms)`, requests_per_sec: Math.round((INDICATORS / ms) * 1000), latency_p50_ms: Math.round(ms), latency_p99_ms: Math.round(bare), non_2xx: 0, errors: 0 });
        await stop(s);
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
    return results;
  },
};
