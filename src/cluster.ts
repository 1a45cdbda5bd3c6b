/**
 * Several API processes on one port (node:cluster), for machines with more than one core.
 *
 * The primary process migrates the database, creates the first admin and the JWT secret, then
 * forks the workers; each worker builds the whole app and accepts connections on the shared port.
 * What must be shared lives in the primary: with no Redis configured, the rate-limit and
 * login-throttle counters are kept there and the workers reach them over the cluster's IPC channel,
 * so a limit holds for the whole node, not per worker. /metrics sums every worker's figures.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type PrometheusContentType } from 'prom-client';
import type { CounterStore, Hit, HitOptions, MemoryCounterStore, Take } from './http/counters.js';
import type { Metrics } from './http/service.js';

const COUNTER_REQUEST = 'threatmon:counter';
const COUNTER_REPLY = 'threatmon:counter-reply';
const METRICS_REQUEST = 'threatmon:metrics';
const METRICS_REPLY = 'threatmon:metrics-reply';
/** A worker committed a change to users or organizations (worker -> primary, answered once every worker forgot). */
const PRINCIPALS_CHANGED = 'threatmon:principals-changed';
const PRINCIPALS_CHANGED_REPLY = 'threatmon:principals-changed-reply';
/** Forget every remembered principal (primary -> each worker, answered when done). */
const PRINCIPALS_CLEAR = 'threatmon:principals-clear';
const PRINCIPALS_CLEAR_REPLY = 'threatmon:principals-clear-reply';

type CounterOp =
  | { op: 'hit'; key: string; limit: number; windowMs: number }
  | { op: 'take'; key: string; limit: number; windowMs: number; want: number }
  | { op: 'peek'; key: string }
  | { op: 'reset'; key: string };

interface CounterRequest {
  type: typeof COUNTER_REQUEST;
  id: number;
  call: CounterOp;
}

interface Reply {
  type: typeof COUNTER_REPLY | typeof METRICS_REPLY | typeof PRINCIPALS_CHANGED_REPLY | typeof PRINCIPALS_CLEAR_REPLY;
  id: number;
  result?: unknown;
  error?: string;
}

/** Both ends of an IPC channel: `process` in a worker, a `Worker` in the primary. */
export interface Channel {
  send(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** Requests over a channel, matched to their replies by id. */
class Caller {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  constructor(
    private readonly channel: Channel,
    private readonly replyType: Reply['type'],
    private readonly timeoutMs: number,
  ) {
    channel.on('message', (message) => {
      const m = message as Partial<Reply>;
      if (m?.type !== this.replyType || typeof m.id !== 'number') return;
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.result);
    });
  }

  call(type: string, payload: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer from the primary process within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve, reject, timer });
      this.channel.send({ type, id, ...payload });
    });
  }
}

/**
 * Below this many hits left in a window, every hit is one message to the primary (and the counts are
 * exact); above it a worker takes a block of 1/64 of what is left, at most 64, and spends it without
 * messages: a message each way cost about a tenth of an e-mail search's CPU (server side, A/B).
 */
const BLOCK_FLOOR = 256;
const BLOCK_MAX = 64;

interface Block {
  /** The window's count before the block was taken. */
  base: number;
  /** 0: the primary refused, the window is full until it ends. */
  size: number;
  /** The limit it was taken under: a new plan's limit asks the primary again. */
  limit: number;
  used: number;
  /** performance.now() at which the primary's window ends. */
  endsAt: number;
}

/** A worker's counter store: every call is answered by the store the primary holds. */
export class IpcCounterStore implements CounterStore {
  readonly kind = 'memory';
  private readonly caller: Caller;
  private readonly blocks = new Map<string, Block>();
  private readonly taking = new Map<string, Promise<unknown>>();

  constructor(channel: Channel, timeoutMs = 2000) {
    this.caller = new Caller(channel, COUNTER_REPLY, timeoutMs);
  }

  async hit(key: string, limit: number, windowMs: number, options?: HitOptions): Promise<Hit> {
    if (!options?.countAhead) return this.caller.call(COUNTER_REQUEST, { call: { op: 'hit', key, limit, windowMs } }) as Promise<Hit>;
    for (;;) {
      const now = performance.now();
      const block = this.blocks.get(key);
      const current = block && block.endsAt > now && block.limit === limit ? block : undefined;
      if (current) {
        const resetMs = Math.max(1, Math.round(current.endsAt - now));
        if (current.used < current.size) {
          current.used++;
          return { count: current.base + current.used, allowed: true, resetMs };
        }
        // The primary refused: the window stays full until it ends, so refuse here without asking.
        if (current.size === 0) return { count: current.base, allowed: false, resetMs };
      }
      // Another request of this worker is taking a block for the key: spend from it rather than take another.
      const inFlight = this.taking.get(key);
      if (inFlight) {
        await inFlight.catch(() => {});
        continue;
      }
      const left = current ? limit - (current.base + current.size) : limit;
      const want = left >= BLOCK_FLOOR ? Math.min(BLOCK_MAX, Math.floor(left / BLOCK_MAX)) : 1;
      const taking = this.caller.call(COUNTER_REQUEST, { call: { op: 'take', key, limit, windowMs, want } }) as Promise<Take>;
      this.taking.set(key, taking);
      let taken: Take;
      try {
        taken = await taking;
      } finally {
        this.taking.delete(key);
      }
      const { granted, count, resetMs } = taken;
      if (granted === 0) {
        this.blocks.set(key, { base: count, size: 0, used: 0, limit, endsAt: performance.now() + resetMs });
        return { count, allowed: false, resetMs };
      }
      this.blocks.set(key, { base: count - granted, size: granted, used: 1, limit, endsAt: performance.now() + resetMs });
      return { count: count - granted + 1, allowed: true, resetMs };
    }
  }

  peek(key: string): Promise<{ count: number; resetMs: number }> {
    return this.caller.call(COUNTER_REQUEST, { call: { op: 'peek', key } }) as Promise<{ count: number; resetMs: number }>;
  }

  async reset(key: string): Promise<void> {
    this.blocks.delete(key);
    await this.caller.call(COUNTER_REQUEST, { call: { op: 'reset', key } });
  }

  async close(): Promise<void> {}
}

/** The primary's side: answers a worker's counter calls from `store`. */
export function answerCounters(channel: Channel, store: MemoryCounterStore): void {
  channel.on('message', (message) => {
    const m = message as Partial<CounterRequest>;
    if (m?.type !== COUNTER_REQUEST || typeof m.id !== 'number' || !m.call) return;
    const { id, call } = m;
    const run = (): Promise<unknown> => {
      switch (call.op) {
        case 'hit':
          return store.hit(call.key, call.limit, call.windowMs);
        case 'take':
          return Promise.resolve(store.take(call.key, call.limit, call.windowMs, call.want));
        case 'peek':
          return store.peek(call.key);
        case 'reset':
          return store.reset(call.key);
      }
    };
    run().then(
      (result) => channel.send({ type: COUNTER_REPLY, id, result: result ?? null }),
      (err: unknown) => channel.send({ type: COUNTER_REPLY, id, error: String(err) }),
    );
  });
}

/** What a worker's principal cache offers the cluster (see src/http/principal-cache.ts). */
export interface ClearableCache {
  clear(): void;
  addPeer(announce: () => Promise<void>): void;
}

/**
 * A worker's side of principal changes: the primary's request to forget is obeyed and acknowledged,
 * and a change this worker commits is announced to the primary, resolving once every worker forgot.
 */
export function joinPrincipalChanges(channel: Channel, cache: ClearableCache, timeoutMs = 2000): void {
  const caller = new Caller(channel, PRINCIPALS_CHANGED_REPLY, timeoutMs);
  channel.on('message', (message) => {
    const m = message as { type?: string; id?: number };
    if (m?.type !== PRINCIPALS_CLEAR || typeof m.id !== 'number') return;
    cache.clear();
    channel.send({ type: PRINCIPALS_CLEAR_REPLY, id: m.id });
  });
  cache.addPeer(async () => {
    await caller.call(PRINCIPALS_CHANGED, {});
  });
}

/** The primary's side: a worker's announcement is passed to every worker, and answered once all of them confirmed. */
export class PrincipalChangeRelay {
  private readonly workers = new Map<Channel, Caller>();

  constructor(private readonly timeoutMs = 2000) {}

  add(worker: Channel): void {
    this.workers.set(worker, new Caller(worker, PRINCIPALS_CLEAR_REPLY, this.timeoutMs));
    worker.on('message', (message) => {
      const m = message as { type?: string; id?: number };
      if (m?.type !== PRINCIPALS_CHANGED || typeof m.id !== 'number') return;
      const id = m.id;
      void Promise.allSettled([...this.workers.values()].map((c) => c.call(PRINCIPALS_CLEAR, {}))).then((results) => {
        const failed = results.filter((r) => r.status === 'rejected').length;
        try {
          worker.send({ type: PRINCIPALS_CHANGED_REPLY, id, ...(failed ? { error: `${failed} worker(s) did not confirm forgetting` } : {}) });
        } catch {
          // The announcing worker is gone: nobody waits for the answer.
        }
      });
    });
  }

  remove(worker: Channel): void {
    this.workers.delete(worker);
  }
}

/**
 * A worker's metrics: its own registry is collected by the primary (prom-client's cluster
 * protocol), and `collect()` returns the sum over all workers.
 */
export class ClusterMetrics {
  private readonly caller: Caller;

  constructor(metrics: Metrics, channel: Channel = process as unknown as Channel) {
    // Constructing an AggregatorRegistry in a worker installs prom-client's reply to the primary's collection request.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([metrics.registry]);
    this.caller = new Caller(channel, METRICS_REPLY, 10_000);
  }

  async collect(): Promise<string> {
    return (await this.caller.call(METRICS_REQUEST, {})) as string;
  }
}

/** The primary's side of /metrics: collect from every worker and answer the asking one. */
export function answerMetrics(aggregator: AggregatorRegistry<PrometheusContentType>): void {
  cluster.on('message', (worker: Worker, message: unknown) => {
    const m = message as { type?: string; id?: number };
    if (m?.type !== METRICS_REQUEST || typeof m.id !== 'number') return;
    const id = m.id;
    aggregator.clusterMetrics().then(
      (result: string) => worker.send({ type: METRICS_REPLY, id, result }),
      (err: unknown) => worker.send({ type: METRICS_REPLY, id, error: String(err) }),
    );
  });
}
