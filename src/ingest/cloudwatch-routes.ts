// POST /api/v1/ingest/cloudwatch: CloudWatch Logs entries (spec body, subscription payload, awslogs envelope, gzip).
import type { FastifyInstance } from 'fastify';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { decodeContentEncoding } from './body-decoding.js';
import { decodeCloudWatchBody } from './cloudwatch-payload.js';
import { idempotencyClaim, idempotencyKeyOf } from './entry-identity.js';
import { ingest, type IngestDeps } from './ingest-result.js';
import { ingestRouteSchema } from './ingest-route-schema.js';
import { BINARY_TYPES, installLogBodyParsers, requireContentType, textBodyAsJson } from './log-body-parsers.js';
import { logBatchToEvents } from './log-batch-events.js';

const ACCEPTED_TYPES = ['application/json', 'text/plain', ...BINARY_TYPES];

/** Registers the route in its own scope (its JSON parser keeps 56-digit event ids exact and sniffs gzip). */
export function registerCloudWatchRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator }) {
  void app.register(async (scope) => {
    installLogBodyParsers(scope, { binary: true });
    scope.post(
      '/api/v1/ingest/cloudwatch',
      {
        onRequest: [deps.auth.require({ scope: 'ingest:write', cookie: false }), requireContentType(ACCEPTED_TYPES)],
        preParsing: decodeContentEncoding,
        schema: ingestRouteSchema('CloudWatch Logs entries (spec body, subscription payload, awslogs envelope, gzip); optional Idempotency-Key header', ACCEPTED_TYPES),
      },
      async (request) => {
        const auth = authOf(request);
        const idempotencyKey = idempotencyKeyOf(request);
        const body = textBodyAsJson(request);
        const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
        const decoded = await decodeCloudWatchBody(body, { limit, maxEntries: deps.maxEntries });
        if (!decoded.batch) return { accepted: 0, duplicates: 0 };
        const receivedAt = new Date();
        const events = logBatchToEvents(decoded.batch, {
          source: 'cloudwatch',
          receivedAt,
          payloadFormat: decoded.envelope === 'awslogs' ? 'awslogs' : decoded.batch.format,
          idempotencyKey,
        });
        return ingest(deps, auth.orgId, 'cloudwatch', events, idempotencyClaim(idempotencyKey, 'cloudwatch', body));
      },
    );
  });
}
