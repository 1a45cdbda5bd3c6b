import { v7 as uuidv7 } from 'uuid';
import type { Config } from './config.js';
import { createDatabase, type Database } from './db/database.js';
import { type CounterStore, FailOpenStore, MemoryCounterStore, RedisCounterStore } from './http/counters.js';
import type { Principal } from './http/auth.js';
import { PrincipalCache } from './http/principal-cache.js';
import { Metrics } from './http/service.js';

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
  /** Principals remembered between requests; whoever commits a change to users or organizations calls `changed()`. */
  readonly principals: PrincipalCache<Principal>;
}

export interface DepsOverrides {
  database?: Database;
  clock?: () => Date;
  newId?: () => string;
  counters?: CounterStore;
  onRedisError?: (err: unknown) => void;
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
  return {
    config,
    database: overrides.database ?? createDatabase(config),
    clock,
    // UUIDv7: time-ordered, so the id tiebreak of a list keeps insertion order.
    newId: overrides.newId ?? (() => uuidv7()),
    counters,
    redisPing,
    metrics: new Metrics(config.metrics),
    principals: new PrincipalCache<Principal>(config.principalCacheMs),
  };
}
