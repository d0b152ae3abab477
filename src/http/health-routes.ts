// /healthz (process up), /readyz (database and bus reachable) and /metrics (Prometheus).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Bus } from '../bus/create-bus.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import { errorBody } from './error-handler.js';
import { errorBodySchema, SECURITY } from './route-schemas.js';

const withTimeout = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref())]);

const checkState = z.enum(['ok', 'unavailable']);
const checksSchema = z.object({ database: checkState, bus: checkState });

export function registerHealthRoutes(fastify: FastifyInstance, deps: { db: Db; bus: Pick<Bus, 'ping'>; metrics: Metrics }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get(
    '/healthz',
    { schema: { summary: 'Process is up', security: SECURITY.none, response: { 200: z.object({ status: z.literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  const readySchema = {
    summary: 'Database and bus reachable (503 with Retry-After when not)',
    security: SECURITY.none,
    response: { 200: z.object({ status: z.literal('ready'), checks: checksSchema }), 503: errorBodySchema.extend({ checks: checksSchema }) },
  };
  app.get('/readyz', { schema: readySchema }, async (_request, reply) => {
    const [db, bus] = await Promise.allSettled([withTimeout(deps.db.ping(), 2000), withTimeout(deps.bus.ping(), 2000)]);
    const checks = {
      database: db.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const),
      bus: bus.status === 'fulfilled' ? ('ok' as const) : ('unavailable' as const),
    };
    if (db.status === 'fulfilled' && bus.status === 'fulfilled') return { status: 'ready' as const, checks };
    reply.header('Retry-After', '5');
    return reply.code(503).send({ ...errorBody(503, 'not_ready', 'a dependency is unavailable'), checks });
  });

  const metricsSchema = {
    summary: 'Prometheus metrics',
    security: SECURITY.none,
    response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } } },
  };
  app.get('/metrics', { schema: metricsSchema }, async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
