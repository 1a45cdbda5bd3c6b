import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { apiOf, freshDatabaseUrl, load, type Result, startServer, stop } from '../harness.js';

const INDICATORS = 10_000;
const PAGE = 1000;

/**
 * TAXII 2.1 (issue figures): a collection of 10,000 indicators (10 incidents of 1,000 IOCs), polled
 * in pages of 1,000 at BENCH_CONNECTIONS: the first page, a page in the middle (added_after the
 * fifth page's X-TAXII-Date-Added-Last) and the last, each its own run; and one client's whole
 * poll, page after page.
 */
export const taxiiScenarios: Record<string, () => Promise<Result[]>> = {
  async taxii() {
    const dbUrl = await freshDatabaseUrl('taxii');
    const s = await startServer('taxii', {}, dbUrl);
    try {
      const api = apiOf(s);
      const { key } = (await api('POST', '/auth/api-keys/', { name: `bench ${Date.now()}` })) as { key: string };
      const headers = { accept: 'application/taxii+json;version=2.1', authorization: `Bearer ${key}` };
      const root = ((await (await fetch(`${s.url}/taxii2/`, { headers })).json()) as { default: string }).default;
      const collections = ((await (await fetch(`${root}collections/`, { headers })).json()) as { collections: Array<{ id: string; title: string }> }).collections;
      const objects = `${root}collections/${collections.find((c) => c.title === 'Indicators')!.id}/objects/`;
      for (let i = 0; i < INDICATORS / 1000; i++) {
        const iocs = Array.from({ length: 1000 }, (_, j) => ({ type: 'ipv4', value: `10.${i}.${Math.floor(j / 250)}.${j % 250}` }));
        await api('POST', '/incidents/', { title: `bench incident ${i}`, iocs });
      }
      // One client's poll; it also dates every version, so the measured pages only read.
      const starts: string[] = [];
      let after = '';
      let count = 0;
      const began = performance.now();
      for (let more = true; more; ) {
        starts.push(after);
        const res = await fetch(`${objects}?limit=${PAGE}${after ? `&added_after=${after}` : ''}`, { headers });
        const page = (await res.json()) as { more: boolean; objects?: unknown[] };
        count += page.objects?.length ?? 0;
        more = page.more;
        after = res.headers.get('x-taxii-date-added-last') ?? after;
      }
      const pages = starts.length;
      console.log(`  one client's poll: ${count} objects in ${pages} pages of ${PAGE}, ${Math.round(performance.now() - began)} ms (first poll: dates them)`);
      // The planner's statistics of the new rows, as autovacuum takes them within its minute.
      const deps = createDeps(loadConfig({ ...process.env, THREATMON_DATABASE_URL: dbUrl }));
      await sql`analyze taxii_objects`.execute(deps.database.db);
      await deps.database.close();
      const pageUrl = (n: number) => `${objects}?limit=${PAGE}${starts[n] ? `&added_after=${starts[n]}` : ''}`;
      return [
        await load(`taxii objects, page 1 of ${pages} (${PAGE} of ${count})`, { url: pageUrl(0), headers }),
        await load(`taxii objects, page 6 of ${pages} (added_after)`, { url: pageUrl(5), headers }),
        await load(`taxii objects, page ${pages} of ${pages}`, { url: pageUrl(pages - 1), headers }),
        await load(`taxii manifest, page 1 of ${pages}`, { url: pageUrl(0).replace('/objects/', '/manifest/'), headers }),
      ];
    } finally {
      await stop(s);
    }
  },
};
