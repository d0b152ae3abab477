// The append statement's rows: each event serialized before its organization's seq lock is taken, given its seq and context under it, joined into bounded slices.
import type { StreamPayload, ToolCallPayload } from '../contract/stream-payloads.js';
import { TooLarge } from '../shared/domain-errors.js';
import { isStorable, MAX_STORED_DEPTH, storable, stringifiedTextIsStorable, textNestsDeeper } from '../shared/input-safety.js';
import { isIdentityKey, type NewAuditEvent } from './audit-types.js';
import { ownMetadata } from './shared-metadata.js';

/** Rows serialized together at most; a batch of up to this many ordinary rows stays one statement. */
export const ROWS_PER_SLICE = 2_000;
/** Characters of JSON one statement carries at most (a single larger row still goes alone). */
export const MAX_SLICE_CHARS = 8 * 1024 * 1024;

/**
 * The stream payload of a tool call: every field present, unknown ones null. `timestamp`: occurredAt as ISO 8601, when
 * the caller has it already (toISOString is not free, and a row needs it too).
 */
export function toolCallPayload(
  e: Pick<NewAuditEvent, 'serverId' | 'sessionId' | 'action' | 'latencyMs' | 'occurredAt'> & { toolName: string },
  timestamp = e.occurredAt.toISOString(),
): ToolCallPayload {
  return {
    type: 'tool_call',
    serverId: e.serverId ?? null,
    sessionId: e.sessionId ?? null,
    toolName: e.toolName,
    action: e.action ?? null,
    latencyMs: e.latencyMs ?? null,
    timestamp,
  };
}

/** What the stream sends of an event (null: not streamed); `occurredAt`: e.occurredAt as ISO 8601. */
function payloadOf(e: NewAuditEvent, occurredAt: string): StreamPayload | null {
  if (e.type === 'tool_call') {
    const toolName = e.toolName;
    return toolName ? toolCallPayload({ serverId: e.serverId, sessionId: e.sessionId, action: e.action, latencyMs: e.latencyMs, occurredAt: e.occurredAt, toolName }, occurredAt) : null;
  }
  if (e.type === 'anomaly' || e.type === 'session_update') return e.payload ?? null;
  return null;
}

/** One event's row, everything but its seq and context id, which only the organization's seq lock decides. */
export interface EventRow {
  /** The row's JSON object without its opening brace and without `seq` and `ctx`: `"occurred_at":…}`. */
  text: string;
  /** The batch's shared metadata stored apart (the row then names its context), or null: the row holds all of it. */
  shared: Record<string, unknown> | null;
  /** What the stream sends of the event, or null. */
  payload: StreamPayload | null;
}

/**
 * The row of `e` (dedupe key already in stored form). Tool call payloads are not stored: they are rebuilt from the
 * columns when read. The metadata is the event's own part when its batch's shared part is stored apart (ownMetadata).
 * A row too large for JSON.stringify (a string past V8's limit) is a 413.
 */
export function eventRow(e: NewAuditEvent): EventRow {
  const occurredAt = e.occurredAt.toISOString();
  const payload = payloadOf(e, occurredAt);
  const own = e.sharedMetadata && e.metadata ? ownMetadata(e.metadata, e.sharedMetadata) : null;
  const row = {
    occurred_at: occurredAt,
    source: e.source,
    type: e.type,
    server_id: e.serverId ?? null,
    session_id: e.sessionId ?? null,
    tool_name: e.toolName ?? null,
    action: e.action ?? null,
    latency_ms: e.latencyMs ?? null,
    payload: e.type === 'tool_call' || payload === null ? null : JSON.stringify(payload),
    metadata: own ?? e.metadata ?? {},
    dedupe_key: isIdentityKey(e.dedupeKey) ? e.dedupeKey : null,
  };
  let json: string;
  try {
    json = JSON.stringify(row);
  } catch (err) {
    // V8 refuses strings past ~512 MiB with a RangeError.
    if (err instanceof RangeError) throw new TooLarge('one entry is too large to store; send smaller entries');
    throw err;
  }
  return { text: json.slice(1), shared: own ? e.sharedMetadata! : null, payload };
}

/**
 * `e` made storable (see storable) and its row. The check reads the row's JSON instead of walking the event: when the
 * text has nothing to replace and does not nest deeper than storable allows, the event's other strings (its dedupe
 * key) are clean, and so is its batch's shared metadata (walked once per object, remembered in `storableShared`), `e`
 * is stored as it is, which is what storable(e) would return. Otherwise, and always for an event with a stored payload
 * (its text sits inside a JSON string of the row), the event is walked and copied as before.
 */
export function storableEventRow(e: NewAuditEvent, storableShared: Set<object>): { event: NewAuditEvent; row: EventRow } {
  if (e.payload == null && isStorable(e.dedupeKey) && sharedIsStorable(e.sharedMetadata, storableShared)) {
    let row: EventRow | null = null;
    try {
      row = eventRow(e);
    } catch {
      // Too large or too deep for JSON.stringify: the walk below names the cause (TooDeep) or eventRow does again.
    }
    // The row's text lacks its opening brace: an object at depth d of the event is at depth d of the text.
    if (row && stringifiedTextIsStorable(row.text) && !textNestsDeeper(row.text, MAX_STORED_DEPTH - 1)) return { event: e, row };
  }
  const event = storable(e);
  return { event, row: eventRow(event) };
}

/** True when `shared` (an event's sharedMetadata, at depth 1 of the event) is absent or storable as it is. */
function sharedIsStorable(shared: Record<string, unknown> | undefined, storableShared: Set<object>): boolean {
  if (!shared || storableShared.has(shared)) return true;
  if (!isStorable(shared, MAX_STORED_DEPTH - 1)) return false;
  storableShared.add(shared);
  return true;
}

/** The full JSON object of a row with its seq and, when it names one, its context's position in the write's list. */
export function rowJson(row: EventRow, seq: number, ctx: number | null): string {
  return ctx === null ? `{"seq":${seq},${row.text}` : `{"seq":${seq},"ctx":${ctx},${row.text}`;
}

/**
 * JSON arrays of consecutive rows (full row objects, from rowJson), in order: at most `rowsPerSlice` rows and
 * `maxChars` characters each, unless a single row is longer. Slices are joined lazily, so one is held at a time.
 */
export function* rowSlices(rows: readonly string[], maxChars = MAX_SLICE_CHARS, rowsPerSlice = ROWS_PER_SLICE): Generator<string> {
  let from = 0;
  while (from < rows.length) {
    let to = from + 1;
    let chars = 2 + rows[from].length;
    while (to < rows.length && to - from < rowsPerSlice && chars + 1 + rows[to].length <= maxChars) chars += 1 + rows[to++].length;
    yield `[${rows.slice(from, to).join(',')}]`;
    from = to;
  }
}
