import { apiOf, load, type Result, startFloor, startServer, stop } from '../harness.js';
import { leakCorpus } from './leaks.js';

/**
 * The Have I Been Pwned surface on the bench corpus (issue figures): breachedaccount for an account
 * in 5 breaches, by API key, at BENCH_CONNECTIONS (32); and the same search by API key and by JWT,
 * so that the cost of a key over a token shows as their ratio.
 */
export const hibpScenarios: Record<string, () => Promise<Result[]>> = {
  async hibp() {
    const { records, dbUrl } = await leakCorpus();
    const s = await startServer('hibp', {}, dbUrl);
    try {
      const api = apiOf(s);
      const account = 'five-breaches@bench.example';
      const sources = (await api('GET', '/leaks/sources/?page_size=5&ordering=created_at')).results as Array<{ id: string }>;
      // Idempotent: a second run on the same database finds the records there (duplicates).
      for (const source of sources) await api('POST', `/leaks/sources/${source.id}/records/`, [{ email: account, password: 'bench-password-5' }]);
      const { key } = (await api('POST', '/auth/api-keys/', { name: `bench ${Date.now()}` })) as { key: string };
      const check = await fetch(`${s.url}/hibp/api/v3/breachedaccount/${account}`, { headers: { 'hibp-api-key': key, 'user-agent': 'threatmon-bench' } });
      const names = (await check.json()) as Array<{ Name: string }>;
      if (names.length !== 5) throw new Error(`breachedaccount answered ${check.status} with ${names.length} breaches, not 5`);
      const hibpHeaders = { 'hibp-api-key': key, 'user-agent': 'threatmon-bench' };
      const breached = `/hibp/api/v3/breachedaccount/${account}`;
      // The floor: the same SQL and JSON from a bare node:http server over the same database.
      const floor = await startFloor(s, '/auth/me/');
      const results: Result[] = [];
      try {
        results.push(await load(`hibp breachedaccount, 5 breaches, by key (${records})`, { url: `${s.url}${breached}`, headers: hibpHeaders }));
        results.push(await load('  the same on the floor server', { url: `${floor.url}${breached}`, headers: hibpHeaders }));
      } finally {
        await floor.stop();
      }
      // A key against a token on the same search, in turns: the machine's drift falls on both alike.
      const search = `${s.url}/api/v1/leaks/search/?email=${account}`;
      const byKey: Result[] = [];
      const byJwt: Result[] = [];
      for (let turn = 1; turn <= 3; turn++) {
        byJwt.push(await load(`search email, by JWT (turn ${turn})`, { url: search, headers: { authorization: `Bearer ${s.token}` } }));
        byKey.push(await load(`search email, by API key (turn ${turn})`, { url: search, headers: { 'x-api-key': key } }));
      }
      const sum = (rs: Result[]) => rs.reduce((n, r) => n + r.requests_per_sec, 0);
      console.log(`  requests/s by key over by JWT, 3 turns: ${(sum(byKey) / sum(byJwt)).toFixed(3)}`);
      results.push(...byJwt, ...byKey);
      return results;
    } finally {
      await stop(s);
    }
  },
};
