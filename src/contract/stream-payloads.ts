// The `data` of each SSE event (tool_call, anomaly, session_update): zod schemas and the types derived from them.
import { z } from 'zod';

/** An instant as `Date.prototype.toISOString()` writes it. */
const instant = z.iso.datetime();

/** Spec 2.1: one tool call; every field present, a value ingestion could not find is null. */
export const toolCallPayloadSchema = z
  .object({
    type: z.literal('tool_call'),
    serverId: z.string().nullable(),
    sessionId: z.string().nullable(),
    toolName: z.string(),
    action: z.string().nullable(),
    latencyMs: z.number().nullable(),
    timestamp: instant,
  })
  .strict();

/** Spec 2.2: a rate spike of one tool on one server (rates in calls per minute, two decimals). */
export const anomalyPayloadSchema = z
  .object({
    type: z.literal('anomaly'),
    serverId: z.string().nullable(),
    anomalyType: z.literal('rate_spike'),
    toolName: z.string(),
    currentRate: z.number(),
    threshold: z.number(),
    timestamp: instant,
  })
  .strict();

/** Spec 2.3: a session's new status. */
export const sessionUpdatePayloadSchema = z
  .object({
    type: z.literal('session_update'),
    sessionId: z.string(),
    status: z.enum(['active', 'suspended']),
    timestamp: instant,
  })
  .strict();

export const streamPayloadSchema = z.discriminatedUnion('type', [toolCallPayloadSchema, anomalyPayloadSchema, sessionUpdatePayloadSchema]);

export type ToolCallPayload = z.output<typeof toolCallPayloadSchema>;
export type AnomalyPayload = z.output<typeof anomalyPayloadSchema>;
export type SessionUpdatePayload = z.output<typeof sessionUpdatePayloadSchema>;
export type StreamPayload = z.output<typeof streamPayloadSchema>;
