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
import { BlockCounter, type CounterStore, type Hit, type HitOptions, type MemoryCounterStore, type Take } from './counters.js';
import type { Metrics } from './metrics.js';

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
  | { op: 'release'; key: string }
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

/** This process's channel to its cluster primary (a worker has one; anything else has none). */
export function processChannel(): Channel {
  const send = process.send?.bind(process);
  if (!send) throw new Error('this process has no IPC channel: it is not a cluster worker');
  return { send: (message) => send(message), on: (event, listener) => process.on(event, listener) };
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

/** A worker's counter store: every call is answered by the store the primary holds. */
export class IpcCounterStore implements CounterStore {
  readonly kind = 'memory';
  private readonly caller: Caller;
  /** A plan's hits, taken from the primary in blocks (see BlockCounter). */
  private readonly blocks: BlockCounter;

  /** `now`: the clock the blocks taken end by (see BlockCounter). */
  constructor(channel: Channel, timeoutMs = 2000, now?: () => number) {
    this.caller = new Caller(channel, COUNTER_REPLY, timeoutMs);
    this.blocks = new BlockCounter(
      (key, limit, windowMs, want) => this.caller.call(COUNTER_REQUEST, { call: { op: 'take', key, limit, windowMs, want } }) as Promise<Take>,
      now,
    );
  }

  async hit(key: string, limit: number, windowMs: number, options?: HitOptions): Promise<Hit> {
    if (options?.countAhead) return this.blocks.hit(key, limit, windowMs);
    return this.caller.call(COUNTER_REQUEST, { call: { op: 'hit', key, limit, windowMs } }) as Promise<Hit>;
  }

  peek(key: string): Promise<{ count: number; resetMs: number }> {
    return this.caller.call(COUNTER_REQUEST, { call: { op: 'peek', key } }) as Promise<{ count: number; resetMs: number }>;
  }

  async release(key: string): Promise<void> {
    await this.caller.call(COUNTER_REQUEST, { call: { op: 'release', key } });
  }

  async reset(key: string): Promise<void> {
    this.blocks.forget(key);
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
        case 'release':
          return store.release(call.key);
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

  constructor(metrics: Metrics, channel: Channel = processChannel()) {
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
