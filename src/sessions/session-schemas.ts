// Zod schemas of the /api/v1/sessions routes: list query and its keyset cursor, the session id parameter, transition bodies.
import { z } from 'zod';

/** The keyset position a page ended at: the last item's (lastSeenAt, sessionId). */
export interface SessionCursor {
  lastSeenAt: string;
  sessionId: string;
}

export function encodeSessionCursor(c: SessionCursor): string {
  return Buffer.from(JSON.stringify([c.lastSeenAt, c.sessionId])).toString('base64url');
}

const cursorSchema = z
  .string()
  .max(1000)
  .transform((s, ctx): SessionCursor => {
    try {
      const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
      if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') {
        // Only dates Postgres reads back in this form: a year outside 1-9999 answered 500.
        const year = new Date(v[0]).getUTCFullYear();
        if (year >= 1 && year <= 9999) return { lastSeenAt: new Date(v[0]).toISOString(), sessionId: v[1] };
      }
    } catch {
      /* reported below */
    }
    ctx.addIssue({ code: 'custom', message: 'must be the nextCursor of a previous page' });
    return z.NEVER;
  });

export const sessionListQuerySchema = z.object({
  status: z.enum(['active', 'suspended']).optional(),
  serverId: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: cursorSchema.optional(),
});

/** Session ids are at most 200 characters (as ingested); anything else cannot name a session. */
export const sessionIdSchema = z.string().min(1).max(200);

export const sessionParamsSchema = z.object({ id: z.string() });

/** Body of suspend and resume: an optional reason; an empty body is allowed. */
export const transitionBodySchema = z
  .object({
    reason: z.string().trim().max(500, 'must be at most 500 characters').optional(),
  })
  .strict();

