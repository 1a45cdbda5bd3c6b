import autocannon from 'autocannon';
import { ADMIN_PASSWORD, CONNECTIONS, load, type Result, seedUsers, serverRssMb, startServer, stop } from '../harness.js';

export const basicsScenarios: Record<string, () => Promise<Result[]>> = {
  async soak() {
    const seconds = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
    const s = await startServer('soak', {});
    try {
      const json = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
      const post = async (p: string, body: unknown) => (await fetch(`${s.url}/api/v1${p}`, { method: 'POST', headers: json, body: JSON.stringify(body) })).json() as Promise<{ id: string }>;
      const source = await post('/leaks/sources/', { name: 'Soak' });
      const incident = await post('/incidents/', { title: 'Soak', severity: 'high' });
      let n = 0;
      const rss: Array<[number, number]> = [];
      const started = Date.now();
      const sampler = setInterval(() => rss.push([(Date.now() - started) / 1000, serverRssMb(s.child.pid as number)]), 1000);
      const r = await autocannon({
        url: s.url,
        connections: CONNECTIONS,
        duration: seconds,
        headers: json,
        requests: [
          { method: 'GET', path: '/api/v1/incidents/?status=open,investigating&severity=high' },
          { method: 'GET', path: `/api/v1/incidents/${incident.id}/` },
          { method: 'POST', path: '/api/v1/incidents/', body: JSON.stringify({ title: 'Soak incident', severity: 'medium', tags: ['soak'] }) },
          { method: 'GET', path: '/api/v1/leaks/search/?domain=soak.example&page_size=10' },
          {
            method: 'POST',
            path: `/api/v1/leaks/sources/${source.id}/records/`,
            setupRequest: (req) => ({ ...req, body: JSON.stringify([{ email: `soak${n++}@soak.example`, password: `pw ${n}` }, { email: `soak${n++}@soak.example` }]) }),
          },
        ],
      });
      clearInterval(sampler);
      const at = (t: number) => rss.reduce((best, cur) => (Math.abs(cur[0] - t) < Math.abs(best[0] - t) ? cur : best), rss[0] ?? [0, 0])[1];
      const from = at(20);
      const to = rss.at(-1)?.[1] ?? 0;
      const growth = from ? ((to - from) / from) * 100 : 0;
      console.log(
        `soak ${seconds} s mixed reads and writes: ${Math.round(r.requests.average)} req/s, p99 ${r.latency.p99} ms, ${r.requests.total} requests, errors ${r.errors}, non-2xx ${r.non2xx}, timeouts ${r.timeouts}; RSS ${from} MB at 20 s, ${to} MB at the end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%, target under +10%)`,
      );
      return [
        {
          scenario: `soak mixed reads and writes (${seconds} s)`,
          requests_per_sec: Math.round(r.requests.average),
          latency_p50_ms: r.latency.p50,
          latency_p99_ms: r.latency.p99,
          non_2xx: r.non2xx,
          errors: r.errors + r.timeouts,
          rss_mb_at_20s: from,
          rss_mb_at_end: to,
          rss_growth_pct: Number(growth.toFixed(1)),
        } as Result,
      ];
    } finally {
      await stop(s);
    }
  },
  async health() {
    const s = await startServer('health', {});
    try {
      return [await load('GET /health/', { url: `${s.url}/health/` })];
    } finally {
      await stop(s);
    }
  },
  async list() {
    const s = await startServer('list', {});
    try {
      await seedUsers(s, 120);
      return [
        await load('GET /users/?page_size=50', {
          url: `${s.url}/api/v1/users/?page_size=50&ordering=-created_at`,
          headers: { authorization: `Bearer ${s.token}` },
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  async login() {
    const s = await startServer('login', {});
    try {
      return [
        await load('POST /auth/token/', {
          url: `${s.url}/api/v1/auth/token/`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  async 'me-memory'() {
    const s = await startServer('me-memory', {});
    try {
      return [await load('GET /auth/me/ (limits: memory)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
  async 'me-redis'() {
    const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const s = await startServer('me-redis', { THREATMON_REDIS_URL: redisUrl });
    try {
      return [await load('GET /auth/me/ (limits: redis)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
  async 'me-off'() {
    const s = await startServer('me-off', { THREATMON_RATE_LIMITS: 'off' });
    try {
      return [await load('GET /auth/me/ (limits: off)', { url: `${s.url}/api/v1/auth/me/`, headers: { authorization: `Bearer ${s.token}` } })];
    } finally {
      await stop(s);
    }
  },
};
