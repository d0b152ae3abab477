// The declared schema of an ingest route (for /openapi.json): summary, accepted content types, answers; bodies are read by the source.
import { z } from 'zod';
import { SECURITY, withErrors } from '../http/route-schemas.js';

/** `{accepted, duplicates}`: entries stored by this request, and entries already stored under the same identity. */
export const ingestResultSchema = z.object({ accepted: z.number().int(), duplicates: z.number().int() });

export function ingestRouteSchema(summary: string, consumes: string[], answer: z.ZodType = ingestResultSchema, security: readonly Record<string, readonly string[]>[] = SECURITY.apiKey) {
  return { summary, consumes, security, response: withErrors({ 200: answer }) };
}
