// /healthz (process up), /readyz (database and bus reachable) and /metrics (Prometheus).
import type { FastifyInstance } from 'fastify';
import type { Bus } from '../bus/bus.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import { errorBody } from './error-handler.js';

const withTimeout = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref())]);

export function registerHealthRoutes(app: FastifyInstance, deps: { db: Db; bus: Bus; metrics: Metrics }) {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const [db, bus] = await Promise.allSettled([withTimeout(deps.db.ping(), 2000), withTimeout(deps.bus.ping(), 2000)]);
    const checks = {
      database: db.status === 'fulfilled' ? 'ok' : 'unavailable',
      bus: bus.status === 'fulfilled' ? 'ok' : 'unavailable',
    };
    if (db.status === 'fulfilled' && bus.status === 'fulfilled') return { status: 'ready', checks };
    reply.header('Retry-After', '5');
    return reply.code(503).send({ ...errorBody(503, 'not_ready', 'a dependency is unavailable'), checks });
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
