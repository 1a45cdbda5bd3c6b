import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const DEFAULT_TOTAL_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** The Prometheus metrics of this process (served at /metrics when THREATMON_METRICS=true). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'threatmon_http_requests_total',
    help: 'HTTP requests answered, by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'threatmon_http_request_duration_seconds',
    help: 'HTTP request latency in seconds, by method and route.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'threatmon_rate_limit_rejections_total',
    help: 'Requests answered 429 by the plan rate limiter or the login throttle.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly ingested = new Counter({
    name: 'threatmon_leak_records_ingested_total',
    help: 'Leak records processed by ingestion, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly ingestDeadlocks = new Counter({
    name: 'threatmon_leak_ingest_deadlock_retries_total',
    help: 'Ingest transactions PostgreSQL rolled back as a deadlock victim and that were stored again.',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'threatmon_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: sent (2xx), retried (failed, tried again later), failed (failed for good).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly notifications = new Counter({
    name: 'threatmon_notifications_total',
    help: 'Notification attempts by channel kind and outcome: sent, retried (failed, tried again later), given_up (failed for 24 h).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly webhookLatency = new Histogram({
    name: 'threatmon_webhook_delivery_latency_seconds',
    help: 'From the event being recorded to its delivery (2xx), in seconds.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600, 3600],
    registers: [this.registry],
  });
  readonly webhookQueue = new Gauge({
    name: 'threatmon_webhook_queue_depth',
    help: 'Webhook messages waiting to be delivered (as last seen by the delivery worker).',
    registers: [this.registry],
  });

  /** Read replicas as last checked (see db/replicas.ts): set by watchReplicas. */
  private replicaStates: ReadonlyArray<{ name: string; healthy: boolean; lagSeconds: number | null }> = [];
  readonly replicaHealthy = new Gauge({
    name: 'threatmon_db_replica_healthy',
    help: 'Whether this process sends reads to the read replica (1) or skips it as down or lagging (0).',
    labelNames: ['replica'] as const,
    registers: [this.registry],
    collect: () => {
      for (const r of this.replicaStates) this.replicaHealthy.set({ replica: r.name }, r.healthy ? 1 : 0);
    },
  });
  readonly replicaLag = new Gauge({
    name: 'threatmon_db_replica_lag_seconds',
    help: 'How far the read replica was behind the primary at its last check (absent while unreachable).',
    labelNames: ['replica'] as const,
    registers: [this.registry],
    collect: () => {
      this.replicaLag.reset();
      for (const r of this.replicaStates) if (r.lagSeconds !== null) this.replicaLag.set({ replica: r.name }, r.lagSeconds);
    },
  });

  watchReplicas(states: ReadonlyArray<{ name: string; healthy: boolean; lagSeconds: number | null }>): void {
    this.replicaStates = states;
  }

  /** The exposition text; in a cluster worker, the sum over every worker (see src/cluster.ts). */
  collect: () => Promise<string> = () => this.registry.metrics();

  constructor(withDefaults: boolean) {
    if (withDefaults) {
      collectDefaultMetrics({ register: this.registry, prefix: 'threatmon_' });
      // prom-client names three gauges `..._total`, a suffix Prometheus keeps for counters (promtool
      // refuses it); each is the sum of the gauge of the same name without it, kept by type.
      for (const name of DEFAULT_TOTAL_GAUGES) this.registry.removeSingleMetric(`threatmon_${name}`);
    }
  }
}
