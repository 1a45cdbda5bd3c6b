/**
 * A closed loop: `connections` callers each running `run` again as soon as it returns, for
 * `seconds`; the rate and the latencies' p50 and p99 (the full-text benches' driver of statements).
 */
export async function closedLoop(run, { connections, seconds }) {
  const times = [];
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const t = process.hrtime.bigint();
        await run();
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.min(times.length - 1, Math.floor(times.length * p))];
  return { per_sec: Number((times.length / seconds).toFixed(1)), p50_ms: Math.round(at(0.5)), p99_ms: Math.round(at(0.99)) };
}
