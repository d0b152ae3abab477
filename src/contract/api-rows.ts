// The rows the HTTP API answers with and the dashboard reads: zod schemas (the routes' response schemas) and their types.
import { z } from 'zod';
import { ACTION_KEYS } from '../audit/action-keys.js';
import { AUDIT_EVENT_TYPES } from '../audit/audit-types.js';
import { AUDIT_SOURCES } from './event-sources.js';
import { STATS_WINDOW_NAMES, type StatsWindow } from '../audit/stats-windows.js';
import { SCOPES } from '../auth/tokens.js';
import { anomalyPayloadSchema } from './stream-payloads.js';

const instant = z.iso.datetime();
const counts = z.object(Object.fromEntries(ACTION_KEYS.map((k) => [k, z.number().int()])) as Record<(typeof ACTION_KEYS)[number], z.ZodNumber>);

/** GET /api/v1/audit-events: one stored event. */
export const auditEventRowSchema = z.object({
  seq: z.number().int(),
  type: z.enum(AUDIT_EVENT_TYPES),
  source: z.enum(AUDIT_SOURCES),
  occurredAt: instant,
  receivedAt: instant,
  serverId: z.string().nullable(),
  sessionId: z.string().nullable(),
  toolName: z.string().nullable(),
  action: z.string().nullable(),
  latencyMs: z.number().nullable(),
  metadata: z.record(z.string(), z.unknown()),
});

export const auditEventPageSchema = z.object({ items: z.array(auditEventRowSchema), nextCursor: z.string().nullable() });

/** GET /api/v1/audit-events/count: matches counted up to AUDIT_COUNT_MAX, as of the org's seq asOfSeq. */
export const auditEventCountSchema = z.object({ count: z.number().int(), capped: z.boolean(), asOfSeq: z.number().int() });

/** GET /api/v1/sessions and /sessions/:id, and the answer of a transition. */
export const sessionRowSchema = z.object({
  sessionId: z.string(),
  serverId: z.string().nullable(),
  status: z.enum(['active', 'suspended']),
  statusReason: z.string().nullable(),
  statusChangedBy: z.string().nullable(),
  firstSeenAt: instant,
  lastSeenAt: instant,
  statusChangedAt: instant,
  toolCallCount: z.number().int(),
});

export const sessionPageSchema = z.object({ items: z.array(sessionRowSchema), nextCursor: z.string().nullable() });

/** GET /api/v1/audit-events/stats: the figures of one window. */
export const auditStatsSchema = z.object({
  window: z.enum(STATS_WINDOW_NAMES as [StatsWindow, ...StatsWindow[]]),
  from: instant,
  to: instant,
  bucketSeconds: z.number().int(),
  asOfSeq: z.number().int(),
  total: z.number().int(),
  actions: counts,
  buckets: z.array(z.object({ start: instant, counts, total: z.number().int() })),
  sessions: z.object({ seen: z.number().int(), active: z.number().int(), suspended: z.number().int() }),
  anomalies: z.array(anomalyPayloadSchema.extend({ seq: z.number().int() })),
});

/** GET/PUT /api/v1/anomalies/acknowledgement: anomalies with seq <= upToSeq are acknowledged (0: none). */
export const anomalyAcknowledgementSchema = z.object({
  upToSeq: z.number().int(),
  acknowledgedBy: z.string().nullable(),
  acknowledgedAt: instant.nullable(),
});

export const organizationSchema = z.object({ id: z.string(), name: z.string() });

/** GET /api/v1/auth/me (and the answer of login and of switching organization) for a browser login. */
export const userMeSchema = z.object({
  user: z.object({ id: z.string(), email: z.string() }),
  organizations: z.array(organizationSchema.extend({ role: z.enum(['admin', 'member']) })),
  activeOrganizationId: z.string().nullable(),
});

/** GET /api/v1/auth/me for an API key. */
export const apiKeyMeSchema = z.object({
  apiKey: z.object({ id: z.string(), name: z.string(), scopes: z.array(z.string()) }),
  organization: organizationSchema.nullable(),
});

export const meSchema = z.union([userMeSchema, apiKeyMeSchema]);

/** An API key as listed (never the key itself). */
export const apiKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  createdAt: instant,
  lastUsedAt: instant.nullable(),
  revokedAt: instant.nullable(),
});

export const apiKeyListSchema = z.object({ items: z.array(apiKeySchema) });

/** A new API key: the key is in this answer only. */
export const createdApiKeySchema = apiKeySchema.extend({ key: z.string() });

export type AuditEventRow = z.output<typeof auditEventRowSchema>;
export type AuditEventPage = z.output<typeof auditEventPageSchema>;
export type AuditEventCount = z.output<typeof auditEventCountSchema>;
export type SessionRow = z.output<typeof sessionRowSchema>;
export type SessionPage = z.output<typeof sessionPageSchema>;
export type StatsSnapshot = z.output<typeof auditStatsSchema>;
export type AnomalyAcknowledgement = z.output<typeof anomalyAcknowledgementSchema>;
export type Organization = z.output<typeof organizationSchema>;
export type UserMe = z.output<typeof userMeSchema>;
export type Me = z.output<typeof meSchema>;
export type ApiKey = z.output<typeof apiKeySchema>;
export type CreatedApiKey = z.output<typeof createdApiKeySchema>;
