// What a profile read, laid over the event the generic reading made of the same record: the profile's values win,
// a field it leaves null keeps the generic value, and metadata.recognition names the profile and its version.
import type { NewAuditEvent } from '../../audit/audit-types.js';
import type { Recognized } from './recognize.js';

/**
 * The event as the profile reads it. A record the profile claims as a tool call (`toolCall`, with a tool name) is a
 * `tool_call`; one it claims as not a tool call (an agent's accepted decision, reported again by its result) is a `log`
 * row with no tool or action. metadata: recognition {profile, version}, actionWord, rawAction, traceId, toolCallId.
 */
export function applyRecognized(event: NewAuditEvent, rec: Recognized): NewAuditEvent {
  const metadata: Record<string, unknown> = { ...event.metadata, recognition: { profile: rec.profileId, version: rec.profileVersion } };
  if (rec.traceId !== null) metadata.traceId = rec.traceId;
  if (rec.toolCallId !== null) metadata.toolCallId = rec.toolCallId;
  const sessionId = rec.sessionId ?? event.sessionId ?? null;
  const occurredAt = rec.emitterTime ?? event.occurredAt;
  if (!rec.toolCall) return { ...event, type: 'log', toolName: null, action: null, sessionId, occurredAt, metadata };
  const toolName = rec.toolName ?? event.toolName ?? null;
  if (rec.actionWord !== null) metadata.actionWord = rec.actionWord;
  if (rec.rawAction !== null) metadata.rawAction = rec.rawAction;
  return {
    ...event,
    type: toolName ? 'tool_call' : 'log',
    toolName,
    action: rec.action ?? (rec.rawAction !== null ? null : event.action),
    serverId: rec.serverId ?? event.serverId,
    sessionId,
    latencyMs: rec.latencyMs ?? event.latencyMs,
    occurredAt,
    metadata,
  };
}
