// The declared schema of an ingest route (for /openapi.json): summary, accepted content types, answers; bodies are read by the source.
import { z } from 'zod';
import { errorBodySchema, SECURITY } from '../http/route-schemas.js';

/** `{accepted, duplicates}`: entries stored by this request, and entries already stored under the same identity. */
export const ingestResultSchema = z.object({ accepted: z.number().int(), duplicates: z.number().int() });

export interface IngestRouteSchemaOptions {
  /** The 200 answer; `{accepted, duplicates}` unless the source's protocol says otherwise. */
  answer?: z.ZodType;
  /** Every other answer; the service's error shape unless the source's protocol says otherwise. */
  error?: z.ZodType;
  security?: readonly Record<string, readonly string[]>[];
  /** The usual body, for the document only: the source reads and checks bodies itself. */
  documentedBody?: z.ZodType;
}

export function ingestRouteSchema(summary: string, consumes: string[], opts: IngestRouteSchemaOptions = {}) {
  return {
    summary,
    consumes,
    security: opts.security ?? SECURITY.apiKey,
    response: { 200: opts.answer ?? ingestResultSchema, default: opts.error ?? errorBodySchema },
    ...(opts.documentedBody ? { documentedBody: opts.documentedBody } : {}),
  };
}
