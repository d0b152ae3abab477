// The canonical record of an event: the event exactly as the query API returns it (src/contract/api-rows.ts), its bytes
// per RFC 8785 (JSON Canonicalization Scheme), and what the stream sends of it. The one definition of all three.
import { canonicalJson } from './canonical-json.js';
import type { AuditEventRow } from '../../contract/api-rows.js';
import type { StreamPayload } from '../../contract/stream-payloads.js';
import type { NewAuditEvent } from '../audit-types.js';

/**
 * The canonical record: seq, type, source, occurredAt, receivedAt (ISO 8601, ms), serverId, sessionId, toolName,
 * action, latencyMs (null when not found) and metadata (the whole object, shared part included). Nothing else.
 */
export type CanonicalRecord = AuditEventRow;

/** The record of `e` (already storable and checked, see prepareRequest) as stored with `seq` at `receivedAt` (ISO 8601). */
export function recordOf(e: NewAuditEvent, seq: number, receivedAt: string): CanonicalRecord {
  return {
    seq,
    type: e.type,
    source: e.source,
    occurredAt: e.occurredAt.toISOString(),
    receivedAt,
    serverId: e.serverId ?? null,
    sessionId: e.sessionId ?? null,
    toolName: e.toolName ?? null,
    action: e.action ?? null,
    latencyMs: e.latencyMs ?? null,
    metadata: e.metadata ?? {},
  };
}

/**
 * The record's bytes (RFC 8785): what a Merkle leaf hashes, and what a reader recomputes from an exported line
 * (canonicalBytes(JSON.parse(line)) gives the same string). A metadata value JSON cannot carry (NaN, Infinity) is
 * stored as JSON writes it (null), so the record is first read back the same way.
 */
export function canonicalBytes(record: CanonicalRecord): string {
  return canonicalJson(record);
}

const SESSION_STATUS: Record<string, 'active' | 'suspended'> = { created: 'active', resumed: 'active', suspended: 'suspended' };

/**
 * What the stream sends of a record (spec 2.1-2.3), or null when it is not streamed: a tool call with a tool name; an
 * anomaly (its figures in metadata: anomalyType, currentRate, threshold); a session_update (its status from
 * metadata.transition). Replay and live delivery send the same.
 */
export function streamPayloadOf(r: CanonicalRecord): StreamPayload | null {
  const m = r.metadata;
  switch (r.type) {
    case 'tool_call':
      if (r.toolName === null) return null;
      return { type: 'tool_call', serverId: r.serverId, sessionId: r.sessionId, toolName: r.toolName, action: r.action, latencyMs: r.latencyMs, timestamp: r.occurredAt };
    case 'anomaly':
      if (r.toolName === null || m.anomalyType !== 'rate_spike' || typeof m.currentRate !== 'number' || typeof m.threshold !== 'number') return null;
      return { type: 'anomaly', serverId: r.serverId, anomalyType: 'rate_spike', toolName: r.toolName, currentRate: m.currentRate, threshold: m.threshold, timestamp: r.occurredAt };
    case 'session_update': {
      const status = typeof m.transition === 'string' ? SESSION_STATUS[m.transition] : undefined;
      if (r.sessionId === null || !status) return null;
      return { type: 'session_update', sessionId: r.sessionId, status, timestamp: r.occurredAt };
    }
    default:
      return null;
  }
}
