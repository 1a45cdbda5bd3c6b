import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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

  /** The exposition text; in a cluster worker, the sum over every worker (see src/cluster.ts). */
  collect: () => Promise<string> = () => this.registry.metrics();

  constructor(withDefaults: boolean) {
    if (withDefaults) collectDefaultMetrics({ register: this.registry, prefix: 'threatmon_' });
  }
}
