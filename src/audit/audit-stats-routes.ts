// GET /api/v1/audit-events/stats: the dashboard's figures for a fixed window (counts by action and bucket, sessions, anomalies).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { auditStatsSchema } from '../contract/api-rows.js';
import type { ReadReplica } from '../db/read-replica.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { readAuditStats, type AuditStats } from './audit-stats-repo.js';
import { bucketRange, STATS_WINDOW_NAMES, STATS_WINDOWS, type StatsWindow } from './stats-windows.js';
import { Unavailable } from '../shared/domain-errors.js';

/** Strict: an unknown parameter (e.g. `window[]=`) is a 400 naming it. */
export const statsQuerySchema = z.strictObject({
  window: z.enum(STATS_WINDOW_NAMES as [StatsWindow, ...StatsWindow[]]).default('1h'),
});

export interface StatsRouteDeps {
  /** Stats read the replica while it is within its lag bound. */
  replica: ReadReplica;
  auth: Authenticator;
  /** Longest the aggregate statement may run (Postgres statement_timeout); past it the request answers 503. */
  queryTimeoutMs: number;
  /** The organization's read slots: the aggregate runs in one (429 when its queue is full). */
  reads: OrgReadSlots;
}

const schema = {
  summary:
    'Figures of a fixed window (1h: 60 one-minute buckets; 24h: 96 fifteen-minute buckets): tool calls by action and bucket, sessions seen, the latest 50 anomalies, and asOfSeq (the last seq they include); 503 when they take longer than STATS_QUERY_TIMEOUT_MS',
  security: SECURITY.reader,
  querystring: statsQuerySchema,
  response: withErrors({ 200: auditStatsSchema }),
};

export function registerAuditStatsRoutes(fastify: FastifyInstance, deps: StatsRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Requests for the same organization and window while one is being computed share its answer: however often a
  // client asks, each (organization, window) holds at most one database connection for this route at a time.
  const inFlight = new Map<string, Promise<AuditStats & { from: number; to: number }>>();

  async function compute(orgId: string, window: StatsWindow) {
    const range = bucketRange(window, Date.now());
    try {
      const stats = await deps.reads.run(orgId, () =>
        deps.replica.run((db) =>
          db.transaction(async (tx) => {
            await tx.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(deps.queryTimeoutMs))}`);
            return readAuditStats(tx, orgId, range);
          }),
        ),
      );
      return { ...stats, from: range.fromMs, to: range.toMs };
    } catch (err) {
      if ((err as { code?: string }).code === '57014') {
        throw new Unavailable(`the figures took longer than ${deps.queryTimeoutMs} ms to compute; retry later`, { code: 'stats_timeout', retryAfterSeconds: 5 });
      }
      throw err;
    }
  }

  app.get('/api/v1/audit-events/stats', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request) => {
    const { window } = request.query;
    const orgId = authOf(request).orgId;
    const key = `${orgId} ${window}`;
    let pending = inFlight.get(key);
    if (!pending) {
      pending = compute(orgId, window).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    const s = await pending;
    return {
      window,
      from: new Date(s.from).toISOString(),
      to: new Date(s.to).toISOString(),
      bucketSeconds: STATS_WINDOWS[window].bucketSeconds,
      asOfSeq: s.asOfSeq,
      total: s.total,
      actions: s.actions,
      buckets: s.buckets,
      sessions: s.sessions,
      anomalies: s.anomalies,
    };
  });
}
