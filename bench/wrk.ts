/**
 * The load generator of the benchmarks: wrk (C, Debian's `wrk` package) where it is installed, else
 * autocannon in this process. wrk is the issues' reference tool and takes a small share of a core
 * where autocannon takes most of one: on 2 cores, that share is the server's.
 * BENCH_LOADER=autocannon forces autocannon.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadFigures {
  requests_per_sec: number;
  /** Milliseconds, to 0.01 under wrk (autocannon gives whole ms). */
  latency_p50_ms: number;
  latency_p99_ms: number;
  non_2xx: number;
  errors: number;
  /** Requests answered in all. */
  requests: number;
  loader: 'wrk' | 'autocannon';
  /** wrk only: every latency seen, as [microseconds, requests] pairs, so that rounds can be merged. */
  histogram?: Array<[number, number]>;
}

/**
 * Percentiles (ms) over the requests of several loads together, not a mean of each load's own:
 * one round's stall then weighs by its requests. Null when a load has no histogram (autocannon).
 */
export function mergedPercentiles(loads: Array<Pick<LoadFigures, 'histogram'>>, ps: number[]): number[] | null {
  if (loads.some((l) => !l.histogram)) return null;
  const counts = new Map<number, number>();
  for (const l of loads) for (const [us, n] of l.histogram ?? []) counts.set(us, (counts.get(us) ?? 0) + n);
  const sorted = [...counts].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((a, [, n]) => a + n, 0);
  return ps.map((p) => {
    const want = Math.ceil((p / 100) * total);
    let seen = 0;
    for (const [us, n] of sorted) if ((seen += n) >= want) return us / 1000;
    return (sorted.at(-1)?.[0] ?? 0) / 1000;
  });
}

let wrkPresent: boolean | undefined;
export function useWrk(): boolean {
  if (process.env.BENCH_LOADER === 'autocannon') return false;
  wrkPresent ??= spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  return wrkPresent;
}

/** Lua long-bracket string: no escaping needed for any body without the closing bracket. */
const luaString = (s: string) => `[==[${s}]==]`;

async function viaWrk(o: LoadOptions): Promise<LoadFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'threatmon-wrk-'));
  const script = path.join(dir, 'load.lua');
  fs.writeFileSync(
    script,
    [
      o.method ? `wrk.method = ${luaString(o.method)}` : '',
      o.body !== undefined ? `wrk.body = ${luaString(o.body)}` : '',
      ...Object.entries(o.headers ?? {}).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`),
      'done = function(summary, latency, requests)',
      '  local e = summary.errors',
      '  io.write(string.format("\\nWRK_JSON {\\"requests\\":%d,\\"duration_us\\":%d,\\"p50_us\\":%d,\\"p99_us\\":%d,\\"status\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"timeout\\":%d}\\n",',
      '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect, e.read, e.write, e.timeout))',
      // Every non-empty latency bucket (µs, requests): latency(i) is wrk's i-th one.
      '  local h = {}',
      '  for i = 1, #latency do local us, n = latency(i); h[#h + 1] = string.format("%d %d", us, n) end',
      '  io.write("WRK_HISTOGRAM " .. table.concat(h, ",") .. "\\n")',
      'end',
    ].join('\n'),
  );
  const threads = Math.min(o.connections, Number(process.env.BENCH_WRK_THREADS ?? 1));
  const child = spawn('wrk', ['-t', String(threads), '-c', String(o.connections), '-d', `${o.duration}s`, '--timeout', '30s', '-s', script, o.url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  fs.rmSync(dir, { recursive: true, force: true });
  const line = /WRK_JSON (\{.*\})/.exec(out)?.[1];
  if (code !== 0 || !line) throw new Error(`wrk exited with ${code}:\n${out}`);
  const r = JSON.parse(line) as { requests: number; duration_us: number; p50_us: number; p99_us: number; status: number; connect: number; read: number; write: number; timeout: number };
  return {
    requests_per_sec: Math.round(r.requests / (r.duration_us / 1e6)),
    latency_p50_ms: Math.round(r.p50_us / 10) / 100,
    latency_p99_ms: Math.round(r.p99_us / 10) / 100,
    non_2xx: r.status,
    errors: r.connect + r.read + r.write + r.timeout,
    requests: r.requests,
    loader: 'wrk',
    histogram: (/WRK_HISTOGRAM ([^\n]*)/.exec(out)?.[1] ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split(' ').map(Number) as [number, number]),
  };
}

async function viaAutocannon(o: LoadOptions): Promise<LoadFigures> {
  // autocannon takes an option given as undefined for a value (`method: undefined` fails): only those set.
  const r = await autocannon({ url: o.url, connections: o.connections, duration: o.duration, ...(o.method && { method: o.method }), ...(o.headers && { headers: o.headers }), ...(o.body !== undefined && { body: o.body }) });
  return {
    requests_per_sec: Math.round(r.requests.average),
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    non_2xx: r.non2xx,
    errors: r.errors,
    requests: r.requests.total,
    loader: 'autocannon',
  };
}

/** One load of `o.duration` seconds, by wrk unless it is missing (a fixed rate needs autocannon itself). */
export function drive(o: LoadOptions): Promise<LoadFigures> {
  return useWrk() ? viaWrk(o) : viaAutocannon(o);
}
