/**
 * How fast this host is right now, as the time of a fixed single-threaded workload: the same work
 * whatever the project's code, so figures from different runs and days can be compared. The hosts
 * benchmarks run on vary by up to half within a day (same code, same data: an import of 34.7 s in
 * the afternoon against 23.5 s in the morning, and CPU time rose by as much), which hides any
 * change of the code smaller than that. A figure is only comparable with another measured at
 * about the same reference.
 *
 *   npx tsx bench/host-speed.ts     # prints the reference alone
 */
import { hash } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const RECORDS = Array.from({ length: 2000 }, (_, i) => ({
  email: `First.Last${i}@Mail${i % 97}.Example.COM`,
  username: `user_${(i * 7919) % 100003}`,
  ip: `10.${i % 256}.${(i * 31) % 256}.${(i * 17) % 256}`,
  full_name: `First${i % 53} Last${i % 89}`,
  extra: { city: `City ${i % 41}`, note: 'x'.repeat(i % 64) },
}));

/** One pass of the workload: JSON, strings, maps and SHA-256, the kinds of work an import and a search do. */
function pass(): number {
  let acc = 0;
  const words = new Map<string, number>();
  for (let round = 0; round < 20; round++) {
    for (const r of RECORDS) {
      const copy = JSON.parse(JSON.stringify(r)) as typeof r;
      const email = copy.email.toLowerCase();
      const domain = email.slice(email.indexOf('@') + 1);
      for (const w of `${copy.full_name} ${copy.username} ${domain}`.toLowerCase().split(/[^a-z0-9]+/)) words.set(w, (words.get(w) ?? 0) + 1);
      acc += hash('sha256', `${copy.ip}\n${email}`, 'hex').charCodeAt(round % 64);
    }
  }
  return acc + words.size;
}

/** The workload's time in milliseconds, the best of `runs` after one warm-up pass (the JIT's). */
export function hostReference(runs = 5): number {
  pass();
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    pass();
    best = Math.min(best, performance.now() - started);
  }
  return Math.round(best);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(`host reference: ${hostReference()} ms (lower is a faster host)`);
