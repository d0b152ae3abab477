// Pieces every route declaration shares: the error body, the security requirements, and a response map with errors.
import { z } from 'zod';

export const issueSchema = z.object({ path: z.string(), message: z.string() });

/** The one error shape of every non-2xx answer (docs/api.md). */
export const errorBodySchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string(),
    message: z.string(),
    code: z.string(),
    issues: z.array(issueSchema).optional(),
  })
  .catchall(z.unknown());

/** Security requirements as OpenAPI writes them; the schemes are declared in openapi.ts. */
export const SECURITY = {
  reader: [{ cookie: [] }, { apiKey: [] }],
  cookie: [{ cookie: [] }],
  apiKey: [{ apiKey: [] }],
  admin: [{ admin: [] }],
  none: [],
} as const satisfies Record<string, readonly Record<string, readonly string[]>[]>;

/** An answer that is not JSON, by content type (OpenAPI's response object). */
export interface ContentResponse {
  description?: string;
  content: Record<string, { schema: z.ZodType }>;
}

/** A route's response map: its own answers plus the error shape for every other status. */
export function withErrors<R extends Record<number, z.ZodType | ContentResponse>>(responses: R): R & { default: typeof errorBodySchema } {
  return { ...responses, default: errorBodySchema };
}
