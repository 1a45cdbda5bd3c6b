import cluster, { type Worker } from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { buildApp, createServices } from '../app.js';
import { bootstrapFirstAdmin } from '../bootstrap.js';
import { answerCounters, answerMetrics, ClusterMetrics, IpcCounterStore, joinPrincipalChanges, PrincipalChangeRelay, processChannel } from '../runtime/cluster.js';
import type { Config } from '../config.js';
import { prepareDatabase } from '../db/prepare.js';
import { createDeps, type AppDeps } from '../deps.js';
import { FailOpenStore, MemoryCounterStore } from '../runtime/counters.js';
import { AppError } from '../http/errors.js';

/** Creates the first admin on an empty database and prints its password once, to the terminal, never through the logger. */
async function bootstrap(deps: AppDeps, services: ReturnType<typeof createServices>): Promise<void> {
  try {
    const { created, generatedPassword } = await bootstrapFirstAdmin(deps, services);
    if (created) {
      const shown = generatedPassword ?? '(THREATMON_ADMIN_PASSWORD)';
      process.stdout.write(
        `\nCreated organization "Default" and its owner.\n  username: admin\n  password: ${shown}\nKeep it now: it is not shown again.\n\n`,
      );
    }
  } catch (err) {
    // Another node bootstrapped at the same moment: nothing to do.
    if (!(err instanceof AppError && err.code === 'duplicate')) throw err;
  }
}

/** A bulk load that was killed left search indexes out: rebuild them before serving. One in progress is left to its importer. */
async function finishInterruptedBulkLoad(services: ReturnType<typeof createServices>, log: { info(obj: object, msg: string): void }): Promise<void> {
  const started = Date.now();
  const outcome = await services.leaks.bulk.finishInterrupted((step, ms) => log.info({ step, ms }, 'bulk load: rebuilt'));
  if (outcome === 'finished') log.info({ ms: Date.now() - started }, 'finished an interrupted bulk load of the leak corpus');
  if (outcome === 'in progress') log.info({}, 'a bulk load of the leak corpus is in progress in another process: its importer rebuilds the search indexes when it ends');
}

/** SIGTERM/SIGINT: stop accepting, finish the requests in flight, exit. */
function closeOnSignals(app: FastifyInstance): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/**
 * `threatmon serve`: one process, or with `workers` > 1 a primary that prepares the database and
 * forks that many API processes sharing the port (see src/cluster.ts).
 */
export async function serve(cfg: Config): Promise<void> {
  if (cluster.isWorker) return serveWorker(cfg);
  if (cfg.workers > 1) return servePrimary(cfg);
  const app = await buildApp(cfg, { jobs: true });
  await bootstrap(app.deps, app.services);
  await finishInterruptedBulkLoad(app.services, app.log);
  closeOnSignals(app);
  await app.listen({ host: cfg.host, port: cfg.port });
}

async function serveWorker(cfg: Config): Promise<void> {
  const channel = processChannel();
  // Without Redis, the counters are the primary's, so a limit holds across workers.
  const counters = cfg.redisUrl
    ? undefined
    : new FailOpenStore(new IpcCounterStore(channel), (err) => console.error(`rate-limit counters unavailable, failing open: ${String(err)}`));
  // Background jobs run in the one worker the primary chose (THREATMON_JOBS_WORKER), not in each.
  const app = await buildApp(cfg, { migrate: false, counters, jobs: process.env.THREATMON_JOBS_WORKER === '1' });
  // A user deactivated through one worker is forgotten by every worker before the change is answered.
  joinPrincipalChanges(channel, app.deps.principals);
  if (cfg.metrics) {
    const shared = new ClusterMetrics(app.deps.metrics, channel);
    app.deps.metrics.collect = () => shared.collect();
  }
  closeOnSignals(app);
  await app.listen({ host: cfg.host, port: cfg.port });
}

async function servePrimary(cfg: Config): Promise<void> {
  const log = pino({ level: cfg.logLevel, base: { pid: process.pid, role: 'primary' } });
  // Everything that must happen once, before any worker starts (createServices also makes the
  // JWT secret when none is configured, so workers find it).
  const deps = createDeps(cfg);
  try {
    await prepareDatabase(deps.database);
    const services = createServices(deps);
    await bootstrap(deps, services);
    await finishInterruptedBulkLoad(services, log);
  } finally {
    await deps.counters.close();
    await deps.database.close();
  }

  const counters = cfg.redisUrl ? null : new MemoryCounterStore();
  const principalChanges = new PrincipalChangeRelay();
  if (cfg.metrics) answerMetrics(new AggregatorRegistry());

  // A signal, not Worker.kill(): that would cut the IPC channel that requests in flight still use.
  const stopWorkers = () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  const listening = new Set<number>();
  let closing = false;
  let announced = false;
  // The worker that runs the background jobs; when it stops, its replacement takes them on.
  let jobsWorker: Worker | undefined;
  const fork = (): Worker => {
    const worker = cluster.fork(jobsWorker ? {} : { THREATMON_JOBS_WORKER: '1' });
    jobsWorker ??= worker;
    if (counters) answerCounters(worker, counters);
    principalChanges.add(worker);
    return worker;
  };

  cluster.on('listening', (worker) => {
    listening.add(worker.id);
    if (!announced && listening.size === cfg.workers) {
      announced = true;
      log.info({ workers: cfg.workers, address: `http://${cfg.host}:${cfg.port}` }, 'listening');
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    principalChanges.remove(worker);
    if (worker === jobsWorker) jobsWorker = undefined;
    const wasListening = listening.delete(worker.id);
    if (closing) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit();
      return;
    }
    if (!wasListening) {
      // It never came up (port taken, bad database...): a new one would fail the same way.
      log.fatal({ worker: worker.process.pid, code, signal }, 'a worker failed to start; stopping');
      closing = true;
      process.exitCode = 1;
      stopWorkers();
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit();
      return;
    }
    log.error({ worker: worker.process.pid, code, signal }, 'a worker stopped; starting another');
    fork();
  });

  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: workers finish their in-flight requests');
    stopWorkers();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  for (let i = 0; i < cfg.workers; i++) fork();
}
