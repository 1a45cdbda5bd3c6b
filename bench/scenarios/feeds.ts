import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createDeps } from '../../src/deps.js';
import { randomBytes } from 'node:crypto';
import { CidrRanges, matchIndicators } from '../../src/modules/feeds/feeds.match.js';
import { FeedsRepository } from '../../src/modules/feeds/feeds.repository.js';
import { apiOf, freshDatabaseUrl, load, type Result, startServer, stop } from '../harness.js';
import { mergedPercentiles } from '../wrk.js';

const INDICATORS = Number(process.env.BENCH_FEED_INDICATORS ?? 100_000);
const CHUNK = 500;

const HELD = Number(process.env.BENCH_HELD_INDICATORS ?? 1_000_000);

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

  /**
   * A tracking-token trigger's cost with 1,000,000 indicators held (issue figure: p99 within 10% of
   * none). One server and database, two organizations: one holds the indicators (among them the
   * loader's own address, so each recorded hit is matched and raises an indicator.matched event, and
   * 1,000 CIDR ranges, read at each match), the other none; their tokens' triggers loaded in
   * alternating rounds. Beside it, what one match costs the recording (off the answer's path).
   */
  async 'feeds-trigger'() {
    // The server first: it makes the database and its first admin; the indicators are seeded beside it, idle.
    const s = await startServer('feeds-trigger', {}, await freshDatabaseUrl('feeds-trigger'));
    const dbUrl = s.dbUrl;
    const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
    const held = randomUUID();
    const key = randomBytes(24).toString('base64url');
    const at = new Date().toISOString();
    try {
      const db = deps.database.db;
      await db.insertInto('organizations').values({ id: held, name: `holds ${HELD} indicators`, plan: 'enterprise', created_at: at, updated_at: at }).execute();
      const began = performance.now();
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < HELD; i += CHUNK) {
          const rows = Array.from({ length: Math.min(CHUNK, HELD - i) }, (_, k) => {
            const n = i + k;
            const [type, value] = n === 0 ? ['ipv4', '127.0.0.1'] : n <= 1000 ? ['cidr', `172.${16 + (n >> 8)}.${n & 255}.0/24`] : ['ipv4', ipOf(n)];
            return { id: randomUUID(), organization_id: held, type, value, stix_id: null, name: null, confidence: 80, tlp: 'amber', labels: '[]', valid_until: null, modified: null, revoked: false, false_positive: false, note: null, first_seen: at, last_seen: at, created_at: at, updated_at: at };
          });
          await trx.insertInto('indicators').values(rows).execute();
        }
      });
      console.log(`feeds-trigger: ${HELD.toLocaleString()} indicators held, seeded in ${((performance.now() - began) / 1000).toFixed(1)} s`);
      await db.insertInto('tracking_tokens').values({ id: randomUUID(), organization_id: held, name: 'Held', memo: '', kind: 'web_bug', status: 'active', trigger_key: key, redirect_url: null, username: null, username_lower: null, password: null, password_sha1: null, api_key: null, api_key_sha1: null, ignore_ips: '[]', last_exposed_at: null, created_by: null, created_at: at, updated_at: at }).execute();
      // What one recorded hit's match costs: 1,000 hits from other addresses, one at a time.
      const repo = new FeedsRepository();
      const cidrs = new CidrRanges();
      const times: number[] = [];
      for (let i = 0; i < 1000; i++) {
        const t0 = performance.now();
        await matchIndicators(db, repo, held, [{ ip: ipOf(1 + ((i * 7919) % HELD)), url: `https://host${i}.example/path`, user_agent: 'Mozilla/5.0 (bench)' }], at, cidrs);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(`feeds-trigger: one hit matched against them: median ${times[500]!.toFixed(2)} ms, p99 ${times[990]!.toFixed(2)} ms (off the trigger's answer, in the recording)`);
    } catch (err) {
      await stop(s);
      throw err;
    } finally {
      await deps.database.close();
    }
    const results: Result[] = [];
    try {
      const bare = await apiOf(s)('POST', '/tracking-tokens/', { name: 'No indicators', kind: 'web_bug' });
      const urls = { held: `${s.url}/t/${key}/`, none: `${s.url}${new URL(bare.trigger_url).pathname}` };
      for (let round = 1; round <= 4; round++) {
        results.push(await load(`GET /t/<key>/ with ${HELD} indicators, round ${round}`, { url: urls.held }));
        results.push(await load(`GET /t/<key>/ with no indicators, round ${round}`, { url: urls.none }));
      }
      const rounds = (label: string) => results.filter((r) => r.scenario.includes(label));
      const over = (label: string) => mergedPercentiles(rounds(label), [50, 99]) ?? (['latency_p50_ms', 'latency_p99_ms'] as const).map((k) => rounds(label).reduce((a, r) => a + r[k], 0) / rounds(label).length);
      const [withAt, noneAt] = [over(`${HELD} indicators`), over('no indicators')];
      ['p50', 'p99'].forEach((name, i) => {
        const [a, b] = [withAt[i]!, noneAt[i]!];
        console.log(`  ${name} over all rounds: ${a.toFixed(2)} ms with ${HELD.toLocaleString()} indicators, ${b.toFixed(2)} ms with none: ${((100 * (a - b)) / Math.max(b, 0.001)).toFixed(1)}% (target: within 10%)`);
      });
    } finally {
      await stop(s);
    }
    // The held organization's hits were matched (the loader's address is one of its indicators).
    const after = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
    try {
      const rows = await after.database.db.selectFrom('tracking_token_exposures').select('indicator_matches').where('organization_id', '=', held).execute();
      const matched = rows.filter((r) => r.indicator_matches !== '[]').length;
      console.log(`feeds-trigger: ${rows.length} hits of the held organization's token recorded (capped at 60 a minute), ${matched} of them matched`);
      if (rows.length === 0 || matched !== rows.length) throw new Error('feeds-trigger: the held organization\'s hits were not all matched');
    } finally {
      await after.database.close();
    }
    return results;
  },
};
