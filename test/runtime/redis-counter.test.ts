import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCounterStore } from '../../src/runtime/counters.js';

/**
 * Callers that arrive while the Redis connection is being made wait for it together: each used to
 * add a 'ready' listener of its own, left behind when the wait timed out, until Node warned of a
 * leak (MaxListenersExceededWarning, seen in the PostgreSQL and Redis test run).
 */
describe('the Redis counter store while its connection is made', () => {
  let silent: net.Server;
  let port: number;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: the client stays short of ready.
    silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('waits with one listener for all callers, and leaves none behind when the wait fails', async () => {
    const store = new RedisCounterStore(`redis://127.0.0.1:${port}`);
    const redis = (store as unknown as { redis: { listenerCount(e: string): number; status: string } }).redis;
    // ioredis may listen itself (its ready check): what counts is that callers add at most one, and
    // that nothing is left behind round after round.
    const after: number[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const before = redis.listenerCount('ready');
        const calls = Array.from({ length: 25 }, (_, i) => store.hit(`k${i}`, 100, 60_000));
        expect(redis.listenerCount('ready')).toBeLessThanOrEqual(before + 1);
        const settled = await Promise.allSettled(calls);
        expect(settled.every((r) => r.status === 'rejected')).toBe(true);
        after.push(redis.listenerCount('ready'));
      }
      expect(after[0]).toBeLessThanOrEqual(1);
      expect(new Set(after).size).toBe(1);
    } finally {
      await store.close();
    }
  });
});
