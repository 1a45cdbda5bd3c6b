import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { AppDeps } from '../deps.js';

const HealthSchema = Type.Object({
  status: Type.String({ description: '`ok`, or `unavailable` when the database does not answer.' }),
  database: Type.String({ description: '`ok` or `unavailable`.' }),
  redis: Type.String({ description: '`ok`, `unavailable`, or `off` when no Redis is configured.' }),
  corpus_shards: Type.Optional(
    Type.Array(
      Type.Object({
        shard: Type.String({ description: 'As errors name it: `corpus shard 0`, `corpus shard 1`...' }),
        slots: Type.Integer({ description: 'How many of the 16 slots of the corpus it holds.' }),
        status: Type.String({ description: '`ok` or `unavailable`: searches and ingests that need it answer 503 meanwhile; the rest answer.' }),
      }),
      { description: 'With THREATMON_CORPUS_SHARDS: each shard of the leak corpus. A shard down does not fail the check (every API node would fail it alike).' },
    ),
  ),
});

/** /health/ and /metrics: outside /api/v1, no authentication, not rate limited. */
export const serviceRoutes = fp(
  async (app: FastifyInstance, { deps }: { deps: AppDeps }) => {
    app.get(
      '/health/',
      {
        schema: {
          tags: ['service'],
          summary: 'Liveness and dependencies',
          description: 'Pings the database (and Redis when configured). 503 when the database is unreachable; a Redis outage is reported but does not fail the check, since rate limits fail open.',
          response: { 200: HealthSchema, 503: HealthSchema },
        },
      },
      async (_req, reply) => {
        let database = 'ok';
        try {
          await deps.database.ping();
        } catch {
          database = 'unavailable';
        }
        let redis = 'off';
        if (deps.redisPing) {
          try {
            await deps.redisPing();
            redis = 'ok';
          } catch {
            redis = 'unavailable';
          }
        }
        const ok = database === 'ok';
        const corpus = await deps.database.corpusShards?.status();
        return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', database, redis, ...(corpus ? { corpus_shards: corpus } : {}) });
      },
    );

    if (!deps.config.metrics) return;
    const { metrics } = deps;
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      metrics.requests.inc({ method: request.method, route, status: String(reply.statusCode) });
      metrics.latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    });
    app.get('/metrics', { schema: { tags: ['service'], summary: 'Prometheus metrics', description: 'Prometheus text exposition. Only when THREATMON_METRICS=true.', produces: ['text/plain'] } }, async (_req, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.collect();
    });
  },
  { name: 'service-routes' },
);
