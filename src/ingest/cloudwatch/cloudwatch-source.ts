// Source `cloudwatch` (POST /api/v1/ingest/cloudwatch): the spec body, subscription payloads, the awslogs envelope, gzip.
import { z } from 'zod';
import { BINARY_TYPES } from '../content-types.js';
import type { BodyKind, IngestSource } from '../ingest-source.js';
import { logBatchToEventsInTurns } from '../log-batch-events.js';
import { decodeCloudWatchBody } from '../cloudwatch-logs/cloudwatch-logs-codec.js';
import { awslogsEnvelopeSchema, specBodySchema, subscriptionPayloadSchema } from '../cloudwatch-logs/cloudwatch-logs-schemas.js';

/** JSON (56-digit event ids kept exact, gzip sniffed), also as text/plain or as gzip bytes (Lambda forwarders). */
const ACCEPTS: Record<string, BodyKind> = { 'application/json': 'exact-json', 'text/plain': 'exact-json' };
for (const type of BINARY_TYPES) ACCEPTS[type] = 'exact-json';

export function cloudWatchSource(): IngestSource {
  return {
    name: 'cloudwatch',
    paths: ['/cloudwatch'],
    summary: 'CloudWatch Logs entries (spec body, subscription payload, awslogs envelope, gzip); optional Idempotency-Key header',
    accepts: ACCEPTS,
    idempotency: { claim: 'cloudwatch' },
    documentedBody: z.union([specBodySchema, subscriptionPayloadSchema, awslogsEnvelopeSchema]),
    async toEvents(body, ctx) {
      const decoded = await decodeCloudWatchBody(body, { limit: ctx.limits.bodyBytes, maxEntries: ctx.limits.maxEntries });
      // A CONTROL_MESSAGE (CloudWatch's health check) is acknowledged and stores nothing.
      if (!decoded.batch) return { events: [] };
      // Blank lines store nothing and are counted (empty-entries.ts).
      const { events, empty } = await logBatchToEventsInTurns(decoded.batch, {
        source: 'cloudwatch',
        receivedAt: ctx.receivedAt,
        payloadFormat: decoded.envelope === 'awslogs' ? 'awslogs' : decoded.batch.format,
        idempotencyKey: ctx.idempotencyKey,
        recognizer: ctx.recognizer,
      });
      return { events, empty };
    },
  };
}
