// Shapes of audit events going into the store and coming out to the stream.
import type { AuditSource } from '../contract/event-sources.js';
import type { AnomalyPayload, SessionUpdatePayload, StreamPayload } from '../contract/stream-payloads.js';

/** Event types stored. Only tool_call, anomaly and session_update are streamed; `log` is an ingested entry with no tool name. */
export const AUDIT_EVENT_TYPES = ['tool_call', 'anomaly', 'session_update', 'log'] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export const STREAM_EVENT_TYPES = ['tool_call', 'anomaly', 'session_update'] as const;
export type StreamEventType = (typeof STREAM_EVENT_TYPES)[number];

/**
 * Prefix of the dedupe keys of entries whose sender gave no identity (src/ingest/dedupe-key.ts). No identity form
 * starts with it. Such an entry is never a duplicate, so its key is neither looked up nor stored (the column is NULL).
 */
export const ONCE_KEY_PREFIX = 'once:';

/** Whether a (stored-form) dedupe key is the sender's identity, to look up and store, rather than a key used once. */
export function isIdentityKey(key: string): boolean {
  return !key.startsWith(ONCE_KEY_PREFIX);
}

/** An event to be stored. `dedupeKey` identifies the entry across retries within its org. */
export interface NewAuditEvent {
  type: AuditEventType;
  source: AuditSource;
  occurredAt: Date;
  serverId?: string | null;
  sessionId?: string | null;
  toolName?: string | null;
  action?: string | null;
  latencyMs?: number | null;
  metadata?: Record<string, unknown>;
  /**
   * The part of `metadata` every entry of its log batch shares, holding the very values found in `metadata` (the same
   * object for the whole batch): stored once per organization (audit_contexts, migrations 010 and 046), not in each
   * row; a shared object value is shared key by key (contexts.ts).
   */
  sharedMetadata?: Record<string, unknown>;
  dedupeKey: string;
  /** Spec 2.2/2.3 payload fields for anomaly and session_update events (tool_call payloads are derived). */
  payload?: AnomalyPayload | SessionUpdatePayload | null;
}

/** One event as carried to SSE clients: seq, name, the server it concerns (for filters) and the spec payload. */
export interface StreamEvent {
  seq: number;
  type: StreamEventType;
  serverId: string | null;
  payload: StreamPayload;
}

/** What one committed write publishes: the org's seq range it used and the streamable events in it. */
export interface PublishedBatch {
  orgId: string;
  firstSeq: number;
  lastSeq: number;
  events: StreamEvent[];
}
