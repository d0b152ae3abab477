// What a profile read, laid over the event the generic reading made of the same record: the profile's values win,
// a field it leaves null keeps the generic value, and metadata.recognition names the profile and its version.
import type { NewAuditEvent } from '../../audit/audit-types.js';
import type { Recognized } from './recognize.js';

/**
 * The event as the profile reads it, changed in place (the event and its metadata are the record's own, just made). A record the profile claims as a tool call (`toolCall`, with a tool name) is a
 * `tool_call`; one it claims as not a tool call (an agent's accepted decision, reported again by its result) is a `log`
 * row with no tool or action. metadata: recognition {profile, version}, actionWord, rawAction, traceId, toolCallId.
 */
export function applyRecognized(event: NewAuditEvent, rec: Recognized): NewAuditEvent {
  const metadata: Record<string, unknown> = (event.metadata ??= {});
  metadata.recognition = { profile: rec.profileId, version: rec.profileVersion };
  if (rec.traceId !== null) metadata.traceId = rec.traceId;
  if (rec.toolCallId !== null) metadata.toolCallId = rec.toolCallId;
  const sessionId = rec.sessionId ?? event.sessionId ?? null;
  const occurredAt = rec.emitterTime ?? event.occurredAt;
  event.sessionId = sessionId;
  event.occurredAt = occurredAt;
  if (!rec.toolCall) {
    event.type = 'log';
    event.toolName = null;
    event.action = null;
    return event;
  }
  const toolName = rec.toolName ?? event.toolName ?? null;
  if (rec.actionWord !== null) metadata.actionWord = rec.actionWord;
  if (rec.rawAction !== null) metadata.rawAction = rec.rawAction;
  event.type = toolName ? 'tool_call' : 'log';
  event.toolName = toolName;
  event.action = rec.action ?? (rec.rawAction !== null ? null : event.action);
  event.serverId = rec.serverId ?? event.serverId;
  event.latencyMs = rec.latencyMs ?? event.latencyMs;
  return event;
}
