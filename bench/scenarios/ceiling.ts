import { spawn } from 'node:child_process';
import { freePort } from '../../test/helpers/free-port.js';
import { ADMIN_PASSWORD, apiOf, databaseUrl, explainIncidentList, load, type Result, ROOT, startFloor, startServer, stop } from '../harness.js';

export const ceilingScenarios: Record<string, () => Promise<Result[]>> = {
  async ceiling() {
    const dbUrl = databaseUrl('ceiling');
    const seed = spawn(process.execPath, ['--import', 'tsx', 'bench/seed-incidents.ts', '10000'], {
      cwd: ROOT,
      env: { ...process.env, THREATMON_DATABASE_URL: dbUrl, THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD, THREATMON_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await new Promise((resolve, reject) => seed.on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`seed failed: ${code}`)))));
    const port = await freePort();
    const bare = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => s.end('hello')).listen(${port}, '127.0.0.1')`], { stdio: 'ignore' });
    // At npm start's level, info: its access lines are written to the pipe and dropped here.
    await new Promise((resolve, reject) =>
      spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`npm run build exited with ${code}`)))),
    );
    const s = await startServer('ceiling', { THREATMON_WORKERS: process.env.BENCH_WORKERS ?? '1', THREATMON_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }, dbUrl, true);
    s.child.stdout?.removeAllListeners('data');
    s.child.stdout?.resume();
    const results: Result[] = [];
    try {
      const headers = { authorization: `Bearer ${s.token}` };
      const one = (await apiOf(s)('GET', '/incidents/?page_size=1')).results[0].id as string;
      const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
      const floor = await startFloor(s, `/incidents/${one}/`);
      const listPath = '/api/v1/incidents/?status=open&severity=high&page_size=50';
      const ratios: Record<string, number[]> = { single: [], list: [], floorSingle: [], floorList: [] };
      try {
        for (let round = 1; round <= rounds; round++) {
          const ceiling = await load(`node:http hello (ceiling), round ${round}`, { url: `http://127.0.0.1:${port}/` });
          const floorSingle = await load(`  floor: GET /incidents/<uuid>/, round ${round}`, { url: `${floor.url}/api/v1/incidents/${one}/` });
          const single = await load(`GET /incidents/<uuid>/, round ${round}`, { url: `${s.url}/api/v1/incidents/${one}/`, headers });
          const floorList = await load(`  floor: GET ${listPath.slice(7)}, round ${round}`, { url: `${floor.url}${listPath}` });
          const list = await load(`GET ${listPath.slice(7)}, round ${round}`, { url: `${s.url}${listPath}`, headers });
          ratios.single?.push(single.requests_per_sec / ceiling.requests_per_sec);
          ratios.list?.push(list.requests_per_sec / ceiling.requests_per_sec);
          ratios.floorSingle?.push(floorSingle.requests_per_sec / ceiling.requests_per_sec);
          ratios.floorList?.push(floorList.requests_per_sec / ceiling.requests_per_sec);
          results.push(ceiling, floorSingle, single, floorList, list);
        }
      } finally {
        await floor.stop();
      }
      const mean = (xs: number[]) => `${((100 * xs.reduce((a, b) => a + b, 0)) / xs.length).toFixed(1)}%`;
      console.log(`  single GET: ${mean(ratios.single ?? [])} of the ceiling (target at least 30%); the floor: ${mean(ratios.floorSingle ?? [])}`);
      console.log(`  list of 50: ${mean(ratios.list ?? [])} of the ceiling; the floor: ${mean(ratios.floorList ?? [])}`);
    } finally {
      await stop(s);
      bare.kill();
    }
    return results;
  },
  async incidents() {
    const dbUrl = databaseUrl('incidents');
    const n = Number(process.env.BENCH_INCIDENTS ?? 100_000);
    const seed = spawn(process.execPath, ['--import', 'tsx', 'bench/seed-incidents.ts', String(n)], {
      cwd: ROOT,
      env: { ...process.env, THREATMON_DATABASE_URL: dbUrl, THREATMON_ADMIN_PASSWORD: ADMIN_PASSWORD, THREATMON_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await new Promise((resolve, reject) => seed.on('exit', (code) => (code === 0 ? resolve(null) : reject(new Error(`seed failed: ${code}`)))));
    await explainIncidentList(dbUrl);
    const s = await startServer('incidents', {}, dbUrl);
    try {
      const auth = { authorization: `Bearer ${s.token}` };
      const one = (await (await fetch(`${s.url}/api/v1/incidents/?page_size=1`, { headers: auth })).json()) as { results: Array<{ id: string }> };
      return [
        await load(`GET /incidents/?status=open,investigating&severity=high (${n})`, { url: `${s.url}/api/v1/incidents/?status=open,investigating&severity=high`, headers: auth }),
        await load('GET /incidents/<uuid>/', { url: `${s.url}/api/v1/incidents/${one.results[0]!.id}/`, headers: auth }),
        await load('POST /incidents/', {
          url: `${s.url}/api/v1/incidents/`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'Bench incident', severity: 'high', tags: ['bench'] }),
        }),
      ];
    } finally {
      await stop(s);
    }
  },
  /**
   * 60 s (BENCH_SOAK_SECONDS) of mixed reads and writes as fast as the server answers them: the
   * incident list and one incident, a new incident, a leak search, and an ingest of two new leak
   * records. It reports errors and non-2xx answers, and the resident memory of the server's
   * processes (primary and workers) from the 20th second to the end: a leak shows as growth.
   */
};
