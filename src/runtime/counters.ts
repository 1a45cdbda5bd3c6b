import { Redis } from 'ioredis';

export interface Hit {
  /** Count in the window after this call (unchanged when refused). */
  count: number;
  /** Whether this call was counted (false once the limit is reached). */
  allowed: boolean;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface HitOptions {
  /**
   * Only whether the limit is kept matters, not the exact count of the moment (a plan's rate limit,
   * not the login throttle): a store that reaches its counts over a channel may take a block of
   * hits from a large limit at once and spend it locally (see BlockCounter).
   */
  countAhead?: boolean;
}

/** What `take` answers: how many of the wanted hits were counted, and the window after them. */
export interface Take {
  granted: number;
  count: number;
  resetMs: number;
}

/**
 * Below this many hits left in a window, every hit is asked of the shared store (and the counts are
 * exact); above it a process takes a block of 1/64 of what is left, at most 64, and spends it
 * without asking: asking cost a message to the cluster's primary (about a tenth of an e-mail
 * search's CPU, server side) or a round trip to Redis for every request.
 */
const BLOCK_FLOOR = 256;
const BLOCK_MAX = 64;

interface Block {
  /** The window's count before the block was taken. */
  base: number;
  /** 0: the store refused, the window is full until it ends. */
  size: number;
  used: number;
  /** The limit it was taken under: a new plan's limit asks the store again. */
  limit: number;
  /** The time (BlockCounter's clock) at which the store's window ends. */
  endsAt: number;
}

/** What to ask a store for when `left` hits of the window are not counted yet: a block, or one near the limit. */
const blockWant = (left: number) => (left >= BLOCK_FLOOR ? Math.min(BLOCK_MAX, Math.floor(left / BLOCK_MAX)) : 1);

/**
 * Hits counted ahead in blocks (HitOptions.countAhead) against a shared store that can count
 * several at once. The limit is never exceeded: a block is counted by the store when taken. What
 * a process took and has not used yet is counted as used by the others.
 */
export class BlockCounter {
  private readonly blocks = new Map<string, Block>();
  /** The next block of a key, taken while its current one still had a quarter left. */
  private readonly ready = new Map<string, Block>();
  private readonly taking = new Map<string, Promise<unknown>>();

  constructor(
    private readonly take: (key: string, limit: number, windowMs: number, want: number) => Promise<Take>,
    /** The clock blocks end by (tests pass their own: a window ends without waiting for it). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  async hit(key: string, limit: number, windowMs: number): Promise<Hit> {
    for (;;) {
      const now = this.now();
      const block = this.blocks.get(key);
      const current = block && block.endsAt > now && block.limit === limit ? block : undefined;
      if (current) {
        const resetMs = Math.max(1, Math.round(current.endsAt - now));
        if (current.used < current.size) {
          current.used++;
          // The next block is asked for before this one runs out, so that no request waits for the
          // store (a worker's requests queued behind a message to a busy primary were its slowest).
          if (current.size >= 4 && current.size - current.used === current.size >> 2 && !this.taking.has(key)) this.prefetch(key, limit, windowMs, current);
          return { count: current.base + current.used, allowed: true, resetMs };
        }
        // The store refused: the window stays full until it ends, so refuse here without asking.
        if (current.size === 0) return { count: current.base, allowed: false, resetMs };
      }
      const next = this.ready.get(key);
      if (next) {
        this.ready.delete(key);
        if (next.endsAt > now && next.limit === limit) {
          this.blocks.set(key, next);
          continue;
        }
      }
      // Another request of this process is taking a block for the key: spend from it rather than take another.
      const inFlight = this.taking.get(key);
      if (inFlight) {
        await inFlight.catch(() => {});
        continue;
      }
      const taking = this.take(key, limit, windowMs, blockWant(current ? limit - (current.base + current.size) : limit));
      this.taking.set(key, taking);
      let taken: Take;
      try {
        taken = await taking;
      } finally {
        this.taking.delete(key);
      }
      // This hit is the new block's first (none of a refusal's).
      const fresh = this.blockOf(taken, limit, taken.granted === 0 ? 0 : 1);
      this.blocks.set(key, fresh);
      return { count: fresh.base + fresh.used, allowed: fresh.size > 0, resetMs: taken.resetMs };
    }
  }

  /** The block a store's answer gives, `used` of it spent. */
  private blockOf({ granted, count, resetMs }: Take, limit: number, used: number): Block {
    return { base: count - granted, size: granted, used, limit, endsAt: this.now() + resetMs };
  }

  /** Takes the block after `current` in the background; near the limit (one by one) it does not. */
  private prefetch(key: string, limit: number, windowMs: number, current: Block): void {
    const left = limit - (current.base + current.size);
    if (left < BLOCK_FLOOR) return;
    const taking = this.take(key, limit, windowMs, blockWant(left))
      .then(
        (taken) => void this.ready.set(key, this.blockOf(taken, limit, 0)),
        // Nothing taken: the hit that needs a block takes one itself, and meets the error there.
        () => {},
      )
      .finally(() => this.taking.delete(key));
    this.taking.set(key, taking);
  }

  /** Drops what this process holds for the key (after a reset of the store's window). */
  forget(key: string): void {
    this.blocks.delete(key);
    this.ready.delete(key);
  }
}

/**
 * Fixed-window counters shared by the plan rate limiter and the login throttle. A window opens
 * with its first counted hit; a refused hit is not counted and does not extend the window.
 */
export interface CounterStore {
  hit(key: string, limit: number, windowMs: number, options?: HitOptions): Promise<Hit>;
  peek(key: string): Promise<{ count: number; resetMs: number }>;
  /**
   * Gives back one counted hit (a login attempt counted before its password was checked, that
   * succeeded): a window whose count comes back to 0 closes, as if the hit had never opened it.
   */
  release(key: string): Promise<void>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
  readonly kind: 'memory' | 'redis';
}

export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory';
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private sweptAt = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private current(key: string, at: number) {
    const w = this.windows.get(key);
    if (w && w.endsAt > at) return w;
    if (w) this.windows.delete(key);
    return undefined;
  }

  private sweep(at: number) {
    // Drop expired windows now and then so memory stays bounded by the active keys.
    if (at - this.sweptAt < 60_000) return;
    this.sweptAt = at;
    for (const [k, w] of this.windows) if (w.endsAt <= at) this.windows.delete(k);
  }

  async hit(key: string, limit: number, windowMs: number): Promise<Hit> {
    const { granted, count, resetMs } = this.take(key, limit, windowMs, 1);
    return { count, allowed: granted === 1, resetMs };
  }

  /** Counts up to `want` hits at once, as many as the limit leaves (0 when reached: nothing changes). */
  take(key: string, limit: number, windowMs: number, want: number): Take {
    const at = this.now();
    this.sweep(at);
    let w = this.current(key, at);
    if (w && w.count >= limit) return { granted: 0, count: w.count, resetMs: w.endsAt - at };
    if (!w) {
      w = { count: 0, endsAt: at + windowMs };
      this.windows.set(key, w);
    }
    const granted = Math.max(1, Math.min(want, limit - w.count));
    w.count += granted;
    return { granted, count: w.count, resetMs: w.endsAt - at };
  }

  async peek(key: string) {
    const at = this.now();
    const w = this.current(key, at);
    return w ? { count: w.count, resetMs: w.endsAt - at } : { count: 0, resetMs: 0 };
  }

  async release(key: string) {
    const w = this.current(key, this.now());
    if (w && --w.count <= 0) this.windows.delete(key);
  }

  async reset(key: string) {
    this.windows.delete(key);
  }

  async close() {
    this.windows.clear();
  }
}

// One round trip, atomic: refuse without counting at the limit, otherwise count up to ARGV[3] hits
// at once (as many as the limit leaves) and open the window: {count after, counted, ttl}.
const TAKE_SCRIPT = `
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if c >= limit then
  return {c, 0, redis.call('PTTL', KEYS[1])}
end
local g = math.min(tonumber(ARGV[3]), limit - c)
c = redis.call('INCRBY', KEYS[1], g)
if c == g then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
return {c, g, ttl}
`;

// Gives back one hit; the key goes with its last hit (the window closes).
const RELEASE_SCRIPT = `
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c <= 1 then redis.call('DEL', KEYS[1]) else redis.call('DECR', KEYS[1]) end
return 0
`;

type ScriptedRedis = Redis & {
  threatmonTake(k: string, l: number, w: number, want: number): Promise<[number, number, number]>;
  threatmonRelease(k: string): Promise<number>;
};

export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis';
  readonly redis: Redis;
  /** A plan's hits, taken from Redis in blocks (see BlockCounter). */
  private readonly blocks = new BlockCounter((key, limit, windowMs, want) => this.take(key, limit, windowMs, want));

  constructor(
    url: string,
    private readonly prefix = 'threatmon:',
  ) {
    // Fail fast while Redis is down so callers can fail open instead of queueing requests.
    this.redis = new Redis(url, {
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => {});
    this.redis.defineCommand('threatmonTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.redis.defineCommand('threatmonRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
  }

  /** The wait for the connection under way, shared by every caller (one 'ready' listener, not one each). */
  private connecting: Promise<void> | null = null;

  /** Waits (briefly) for the first connection; during an outage it fails at once so callers fail open fast. */
  private connected(): Promise<void> {
    if (this.redis.status !== 'connecting' && this.redis.status !== 'connect') return Promise.resolve();
    this.connecting ??= new Promise<void>((resolve, reject) => {
      const settle = (err?: Error) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        this.connecting = null;
        if (err) reject(err);
        else resolve();
      };
      const onReady = () => settle();
      const timer = setTimeout(() => settle(new Error('redis: not connected')), 1000);
      this.redis.once('ready', onReady);
    });
    return this.connecting;
  }

  /** Counts up to `want` hits at once, as many as the limit leaves (0 when reached: nothing changes). */
  private async take(key: string, limit: number, windowMs: number, want: number): Promise<Take> {
    await this.connected();
    const [count, granted, ttl] = await (this.redis as ScriptedRedis).threatmonTake(this.prefix + key, limit, windowMs, want);
    return { count, granted, resetMs: Math.max(0, ttl) };
  }

  async hit(key: string, limit: number, windowMs: number, options?: HitOptions): Promise<Hit> {
    if (options?.countAhead) return this.blocks.hit(key, limit, windowMs);
    const { granted, count, resetMs } = await this.take(key, limit, windowMs, 1);
    return { count, allowed: granted === 1, resetMs };
  }

  async peek(key: string) {
    await this.connected();
    const [[, count], [, ttl]] = (await this.redis
      .multi()
      .get(this.prefix + key)
      .pttl(this.prefix + key)
      .exec()) as [[unknown, string | null], [unknown, number]];
    return { count: Number(count ?? 0), resetMs: Math.max(0, ttl) };
  }

  async release(key: string) {
    await this.connected();
    await (this.redis as ScriptedRedis).threatmonRelease(this.prefix + key);
  }

  async reset(key: string) {
    this.blocks.forget(key);
    await this.connected();
    await this.redis.del(this.prefix + key);
  }

  async ping(): Promise<void> {
    await this.connected();
    await this.redis.ping();
  }

  async close() {
    this.redis.disconnect();
  }
}

/**
 * Wraps a remote store so an outage never takes the API down: on error, the hit is allowed
 * (fail open) and the error is reported once per outage.
 */
export class FailOpenStore implements CounterStore {
  private failing = false;
  constructor(
    private readonly inner: CounterStore,
    private readonly onError: (err: unknown) => void,
  ) {}
  get kind() {
    return this.inner.kind;
  }
  private async guard<T>(fn: () => Promise<T>, fallback: T): Promise<T> {
    try {
      const r = await fn();
      this.failing = false;
      return r;
    } catch (err) {
      if (!this.failing) this.onError(err);
      this.failing = true;
      return fallback;
    }
  }
  hit(key: string, limit: number, windowMs: number, options?: HitOptions) {
    return this.guard(() => this.inner.hit(key, limit, windowMs, options), { count: 0, allowed: true, resetMs: windowMs });
  }
  peek(key: string) {
    return this.guard(() => this.inner.peek(key), { count: 0, resetMs: 0 });
  }
  release(key: string) {
    return this.guard(() => this.inner.release(key), undefined);
  }
  reset(key: string) {
    return this.guard(() => this.inner.reset(key), undefined);
  }
  close() {
    return this.inner.close();
  }
}
