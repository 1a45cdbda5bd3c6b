import type { Config } from './config.js';
import { createDatabase, type Database } from './db/database.js';
import { type CounterStore, FailOpenStore, MemoryCounterStore, RedisCounterStore } from './runtime/counters.js';
import { PrincipalCache } from './runtime/principal-cache.js';
import { Metrics } from './runtime/metrics.js';
import { uuidV7Ids } from './runtime/ids.js';

export { uuidV7Ids };

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
