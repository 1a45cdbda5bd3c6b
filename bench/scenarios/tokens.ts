import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { apiOf, load, type Result, startServer, stop } from '../harness.js';
import { drive, mergedPercentiles } from '../wrk.js';

export const tokensScenarios: Record<string, () => Promise<Result[]>> = {
  async tokens() {
    const s = await startServer('tokens', {});
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const bug = await api('POST', '/tracking-tokens/', { name: 'Bench bug', kind: 'web_bug' });
      const live = `${s.url}${new URL(bug.trigger_url).pathname}`;
      const unknown = `${s.url}/t/${'Q'.repeat(32)}/`;
      const results: Result[] = [];
      // Alternating rounds: the two see the same machine, and noise averages out over the rounds.
      for (let round = 1; round <= 4; round++) {
        results.push(await load(`GET /t/<key>/ live web_bug, round ${round}`, { url: live }));
        results.push(await load(`GET /t/<key>/ unknown key, round ${round}`, { url: unknown }));
      }
      // Over the requests of all rounds of each (wrk's histograms merged), else the mean of the rounds.
      const rounds = (label: string) => results.filter((r) => r.scenario.includes(label));
      const over = (label: string) =>
        mergedPercentiles(rounds(label), [50, 99]) ??
        (['latency_p50_ms', 'latency_p99_ms'] as const).map((k) => rounds(label).reduce((a, r) => a + r[k], 0) / rounds(label).length);
      const [liveAt, unknownAt] = [over('live'), over('unknown')];
      ['p50', 'p99'].forEach((name, i) => {
        const [a, b] = [liveAt[i]!, unknownAt[i]!];
        console.log(`  ${name} over all rounds: live ${a.toFixed(2)} ms, unknown ${b.toFixed(2)} ms, difference ${((100 * Math.abs(a - b)) / Math.max(a, b, 0.001)).toFixed(1)}% (target under 10%)`);
      });

      // The flood: 10 s of 32 connections on one token while the incident list is loaded.
      for (let i = 0; i < 200; i++) await api('POST', '/incidents/', { title: `Bench incident ${i}`, severity: i % 2 ? 'high' : 'low' });
      const flooded = await api('POST', '/tracking-tokens/', { name: 'Flooded', kind: 'web_bug' });
      const list = { url: `${s.url}/api/v1/incidents/?severity=high`, headers, connections: 8, duration: 10 };
      const quiet = await drive(list);
      const [busy] = await Promise.all([drive(list), drive({ url: `${s.url}${new URL(flooded.trigger_url).pathname}`, connections: 32, duration: 10 })]);
      await new Promise((r) => setTimeout(r, 1000));
      const recorded = (await api('GET', `/tracking-tokens/${flooded.id}/`)).exposure_count;
      console.log(`flood of one token (32 connections, 10 s): ${recorded} exposures recorded (cap 60); incident list p99 ${quiet.latency_p99_ms} ms alone, ${busy.latency_p99_ms} ms during the flood (${(busy.latency_p99_ms / Math.max(quiet.latency_p99_ms, 0.01)).toFixed(2)}x, target under 2x)`);
      results.push({ scenario: 'incident list during a token flood (p99 ms)', requests_per_sec: busy.requests_per_sec, latency_p50_ms: busy.latency_p50_ms, latency_p99_ms: busy.latency_p99_ms, non_2xx: busy.non_2xx, errors: busy.errors, recorded } as Result);

      // 100,000 exposures over 100 tokens of the admin's organization (1,000 each), seeded directly.
      const tokenIds: string[] = [bug.id];
      for (let i = 1; i < 100; i++) tokenIds.push((await api('POST', '/tracking-tokens/', { name: `Bench token ${i}`, kind: i % 2 ? 'credential' : 'api_key' })).id);
      const dbUrl = s.dbUrl;
      const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
      try {
        const db = deps.database.db;
        const orgId = (await db.selectFrom('tracking_tokens').select('organization_id').where('id', '=', bug.id).executeTakeFirstOrThrow()).organization_id;
        const base = Date.now() - 30 * 86_400_000;
        for (const [n, tokenId] of tokenIds.entries()) {
          const rows = Array.from({ length: 1000 }, (_, k) => ({
            id: deps.newId(),
            organization_id: orgId,
            token_id: tokenId,
            channel: ['http', 'login', 'api_key'][k % 3] as string,
            occurred_at: new Date(base + (n * 1000 + k) * 1000).toISOString(),
            source_ip: `198.51.100.${k % 250}`,
            user_agent: 'Mozilla/5.0 (bench)',
            referer: null,
            method: 'GET',
            path: '/t/x/',
            leak_record_id: null,
            leak_source_id: null,
            leak_source_name: null,
          }));
          for (let i = 0; i < rows.length; i += 250) await db.insertInto('tracking_token_exposures').values(rows.slice(i, i + 250)).execute();
          await db.updateTable('tracking_tokens').set((eb) => ({ exposure_count: eb('exposure_count', '+', 1000) })).where('id', '=', tokenId).execute();
        }
      } finally {
        await deps.database.close();
      }
      results.push(await load('GET /tracking-tokens/ (100 tokens, 100000 exposures)', { url: `${s.url}/api/v1/tracking-tokens/`, headers }));
      results.push(await load('GET /tracking-tokens/<uuid>/timeline/ (1000+ exposures)', { url: `${s.url}/api/v1/tracking-tokens/${bug.id}/timeline/`, headers }));
      results.push(await load('GET .../timeline/?channel=login', { url: `${s.url}/api/v1/tracking-tokens/${bug.id}/timeline/?channel=login`, headers }));
      return results;
    } finally {
      await stop(s);
    }
  },
  /**
   * Webhooks: delivery latency (event recorded to receiver) at a fixed event rate into 10
   * webhooks, the cost of 5 subscribed webhooks on POST /incidents/, and a receiver that hangs
   * beside others. The receiver runs in this process.
   */
};
