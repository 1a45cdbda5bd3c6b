import http from 'node:http';
import autocannon from 'autocannon';
import { apiOf, load, type Result, startServer, stop } from '../harness.js';

export const webhooksScenarios: Record<string, () => Promise<Result[]>> = {
  async webhooks() {
    const latencies: number[] = [];
    const byPath = new Map<string, number>();
    // Each (webhook, webhook-id) once: a message delivered twice would show here.
    const seen = new Set<string>();
    let duplicates = 0;
    let hang = false;
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.url === '/hang' && hang) return; // never answered: the sender's 10 s timeout ends it
        const { timestamp } = JSON.parse(body) as { timestamp: string };
        const key = `${req.url} ${String(req.headers['webhook-id'])}`;
        if (seen.has(key)) duplicates++;
        seen.add(key);
        latencies.push(Date.now() - Date.parse(timestamp));
        byPath.set(req.url ?? '', (byPath.get(req.url ?? '') ?? 0) + 1);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookBase = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    const s = await startServer('webhooks', { THREATMON_WEBHOOK_ALLOW_PRIVATE: 'true' });
    const results: Result[] = [];
    try {
      const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const api = apiOf(s);
      const post = { url: `${s.url}/api/v1/incidents/`, method: 'POST' as const, headers, body: JSON.stringify({ title: 'Bench webhook incident', severity: 'high' }) };
      const without = await load('POST /incidents/ without webhooks', post);
      const five: string[] = [];
      for (let i = 0; i < 5; i++) five.push((await api('POST', '/webhooks/', { url: `${hookBase}/five-${i}`, events: ['incident.created'] })).id);
      const withFive = await load('POST /incidents/ with 5 webhooks subscribed', post);
      console.log(`  with 5 webhooks: ${((100 * withFive.requests_per_sec) / without.requests_per_sec).toFixed(0)}% of the rate without (target at least 90%)`);
      results.push(without, withFive);
      for (const id of five) await api('DELETE', `/webhooks/${id}/`);

      const seconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 30);
      const rate = Number(process.env.BENCH_EVENT_RATE ?? 1000);
      const measure = async (label: string, hooks: string[], eventRate: number) => {
        const ids: string[] = [];
        for (const path of hooks) ids.push((await api('POST', '/webhooks/', { url: `${hookBase}${path}`, events: ['incident.created'] })).id);
        latencies.length = 0;
        byPath.clear();
        duplicates = 0;
        // Events made: counted by the API (autocannon leaves out the requests still in flight at its end).
        const incidents = async () => (await api('GET', '/incidents/?page_size=1')).count as number;
        const before = await incidents();
        const r = await autocannon({ ...post, connections: 16, duration: seconds, overallRate: eventRate });
        let expected = (await incidents()) - before;
        const wanted = hooks.filter((h) => h !== '/hang');
        const deadline = Date.now() + 60_000;
        while (wanted.some((h) => (byPath.get(h) ?? 0) < expected) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
        // Requests still in flight when the load ended made events too: counted again once all is delivered.
        expected = (await incidents()) - before;
        latencies.sort((a, b) => a - b);
        const q = (f: number) => latencies[Math.min(latencies.length - 1, Math.floor(f * latencies.length))] ?? 0;
        const delivered = wanted.reduce((n, h) => n + (byPath.get(h) ?? 0), 0);
        console.log(`${label}: ${expected} events in ${seconds} s (${Math.round(expected / seconds)}/s), ${delivered} of ${expected * wanted.length} deliveries to the answering webhooks (${duplicates} twice); event to delivery p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`);
        results.push({ scenario: `${label} (event to delivery)`, requests_per_sec: Math.round(delivered / seconds), latency_p50_ms: q(0.5), latency_p99_ms: q(0.99), non_2xx: r.non2xx, errors: expected * wanted.length - delivered });
        for (const id of ids) await api('DELETE', `/webhooks/${id}/`);
      };
      // Every event goes to all 10: deliveries are ten times the event rate.
      await measure('100 events/s into 10 webhooks (1000 deliveries/s)', Array.from({ length: 10 }, (_, i) => `/ten-100-${i}`), 100);
      hang = true;
      await measure('100 events/s, one of 5 webhooks hanging', ['/hang', '/ok-1', '/ok-2', '/ok-3', '/ok-4'], 100);
      hang = false;
      if (rate !== 100) await measure(`${rate} events/s into 10 webhooks (${rate * 10} deliveries/s)`, Array.from({ length: 10 }, (_, i) => `/ten-${rate}-${i}`), rate);
    } finally {
      await stop(s);
      receiver.closeAllConnections();
      receiver.close();
    }
    return results;
  },
  /**
   * The request hot path against its ceiling: threatmon as `npm start` runs it (one process, the
   * rate limiter on, request logging at info) and a bare node:http "hello" server, loaded in
   * alternating rounds: the single GET and the filtered list of 50 over 10,000 incidents, each as a
   * share of the ceiling measured beside it. Each is also loaded on the floor server
   * (bench/floor-server.ts): the same SQL, JSON and headers without threatmon's per-request work.
   */
};
