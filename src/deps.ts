import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from './config.js';
import { createDatabase, type Database } from './db/database.js';
import { type CounterStore, FailOpenStore, MemoryCounterStore, RedisCounterStore } from './runtime/counters.js';
import { PrincipalCache } from './runtime/principal-cache.js';
import { Metrics } from './runtime/metrics.js';

/** Everything impure the app uses, built once and passed in, so tests can control each piece. */
export interface AppDeps {
  readonly config: Config;
  readonly database: Database;
  /** Current time; tests pass a controllable clock instead of sleeping. */
  readonly clock: () => Date;
  readonly newId: () => string;
  /** Fixed-window counters for rate limits and login throttling (memory or Redis). */
  readonly counters: CounterStore;
  readonly redisPing: (() => Promise<void>) | null;
  readonly metrics: Metrics;
  /**
   * Principals remembered between requests (the authentication hook's: it alone reads and writes
   * them); whoever commits a change to users or organizations calls `changed()`.
   */
  readonly principals: PrincipalCache<unknown>;
}

export interface DepsOverrides {
  database?: Database;
  clock?: () => Date;
  newId?: () => string;
  counters?: CounterStore;
  onRedisError?: (err: unknown) => void;
  /** Called with the text of every statement the database runs (tests). */
  queryLog?: (sql: string) => void;
}

export function createDeps(config: Config, overrides: DepsOverrides = {}): AppDeps {
  const clock = overrides.clock ?? (() => new Date());
  let counters = overrides.counters;
  let redisPing: AppDeps['redisPing'] = null;
  if (!counters) {
    if (config.redisUrl) {
      const redis = new RedisCounterStore(config.redisUrl);
      redisPing = () => redis.ping();
      counters = new FailOpenStore(
        redis,
        overrides.onRedisError ?? ((err) => console.error(`redis unavailable, rate limits fail open: ${String(err)}`)),
      );
    } else {
      counters = new MemoryCounterStore(() => clock().getTime());
    }
  }
  const database = overrides.database ?? createDatabase(config, { queryLog: overrides.queryLog });
  const metrics = new Metrics(config.metrics);
  if (database.replicas) metrics.watchReplicas(database.replicas.states);
  return {
    config,
    database,
    clock,
    // UUIDv7: time-ordered, so the id tiebreak of a list keeps insertion order.
    newId: overrides.newId ?? uuidV7Ids(),
    counters,
    redisPing,
    metrics,
    principals: new PrincipalCache<unknown>(config.principalCacheMs),
  };
}

/**
 * UUIDv7 ids from uuid's v7(), laid out and ordered as its default ones are (a counter from a
 * random start in each millisecond keeps ids made in the same millisecond in order), with random
 * bytes drawn 4 KiB at a time: uuid refills its own 256-byte pool every 15 ids, a visible cost to
 * a bulk load's writer.
 */
export function uuidV7Ids(): () => string {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  let msecs = -Infinity;
  let seq = 0;
  // The id's bytes, then its text written into one buffer and read out as one string: uuid's own
  // stringify concatenates 20 pieces, about 700 bytes of garbage an id, a quarter of what a bulk
  // load's writer allocated.
  const bytes = new Uint8Array(16);
  const text = Buffer.alloc(36);
  return () => {
    if (at + 16 > pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    const random = pool.subarray(at, (at += 16));
    const now = Date.now();
    if (now > msecs) {
      msecs = now;
      seq = ((random[6] as number) << 23) | ((random[7] as number) << 16) | ((random[8] as number) << 8) | (random[9] as number);
    } else {
      seq = (seq + 1) | 0;
      if (seq === 0) msecs++;
    }
    uuidv7({ random, msecs, seq }, bytes);
    let o = 0;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[o++] = DASH;
      const b = bytes[i] as number;
      text[o++] = HEX_DIGITS[b >> 4] as number;
      text[o++] = HEX_DIGITS[b & 15] as number;
    }
    return text.toString('latin1');
  };
}

const DASH = 0x2d;
/** The character codes of 0-9a-f. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
