import { apiOf, load, type Result, startServer, stop } from '../harness.js';
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
      const search = `${s.url}/api/v1/leaks/search/?email=${account}`;
      const results = [
        await load(`hibp breachedaccount, 5 breaches, by key (${records})`, { url: `${s.url}/hibp/api/v3/breachedaccount/${account}`, headers: { 'hibp-api-key': key, 'user-agent': 'threatmon-bench' } }),
        await load('search email, by JWT', { url: search, headers: { authorization: `Bearer ${s.token}` } }),
        await load('search email, by API key', { url: search, headers: { 'x-api-key': key } }),
        await load('search email, by JWT (again)', { url: search, headers: { authorization: `Bearer ${s.token}` } }),
        await load('search email, by API key (again)', { url: search, headers: { 'x-api-key': key } }),
      ];
      const [, jwt1, key1, jwt2, key2] = results as [Result, Result, Result, Result, Result];
      console.log(`  requests/s by key over by JWT: ${((key1.requests_per_sec + key2.requests_per_sec) / (jwt1.requests_per_sec + jwt2.requests_per_sec)).toFixed(3)} (runs interleaved)`);
      return results;
    } finally {
      await stop(s);
    }
  },
};
