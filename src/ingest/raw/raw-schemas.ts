// The raw JSON audit event accepted by POST /api/v1/ingest/events (the gateway's and SDKs' own normalization).
import { z } from 'zod';
import { MAX_METADATA_DEPTH, nestsDeeper } from '../../shared/input-safety.js';

const MAX_INT32 = 2_147_483_647;
const id = z.string().trim().min(1).max(200);

/** ISO 8601 with offset or Z, within what Postgres timestamptz and JS Date both hold. */
export const isoTimestamp = z
  .string()
  .max(64)
  .refine((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp with a time zone, e.g. 2024-05-01T10:00:00.000Z')
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1970 && d.getUTCFullYear() <= 9999, 'must be between 1970 and 9999');

export const rawEventSchema = z
  .object({
    id: z.union([id, z.number().int().nonnegative().transform(String)]).optional(),
    type: z.literal('tool_call').default('tool_call'),
    serverId: id,
    sessionId: id.nullish(),
    toolName: id,
    action: z.string().trim().min(1).max(64).nullish(),
    latencyMs: z.number().int().min(0).max(MAX_INT32).nullish(),
    timestamp: isoTimestamp.optional(),
    metadata: z
      .record(z.string().max(200), z.unknown())
      .refine((m) => !nestsDeeper(m, MAX_METADATA_DEPTH), `metadata must not nest deeper than ${MAX_METADATA_DEPTH} levels`)
      .optional(),
  })
  .strict();

export type RawEvent = z.output<typeof rawEventSchema>;
