// Source `raw` (POST /api/v1/ingest/events): audit events as one JSON object, an array, or NDJSON.
import { z } from 'zod';
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { InvalidInput, type IssueDetail } from '../../shared/domain-errors.js';
import { dedupeKey, ownIdentity } from '../dedupe-key.js';
import { mapAction } from '../normalize/actions.js';
import type { EventsContext, IngestSource } from '../ingest-source.js';
import { checkEntryCount } from '../store-events.js';
import { messageView } from '../recognition/record-view.js';
import { applyRecognized } from '../recognition/apply-recognized.js';
import { rawEventSchema, type RawEvent } from './raw-schemas.js';

/** Splits an NDJSON body into parsed values; blank lines are skipped; a bad line is an InvalidInput naming it. */
export function parseNdjson(text: string, maxEntries: number): unknown[] {
  const out: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    checkEntryCount(out.length + 1, maxEntries);
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      throw new InvalidInput('body is not valid NDJSON', [{ path: `line ${i + 1}`, message: (err as Error).message }]);
    }
  }
  return out;
}

/**
 * The action of a raw event through the same vocabulary as the log sources ("BLOCK" is deny): a word other than the
 * action itself is kept in metadata.actionWord, a word outside the vocabulary in metadata.rawAction (the action is null).
 */
function rawAction(word: string | null | undefined): { action: string | null; metadata: Record<string, string> } {
  if (word === null || word === undefined) return { action: null, metadata: {} };
  const mapped = mapAction(word);
  if (mapped.action === null) return { action: null, metadata: mapped.rawAction === null ? {} : { rawAction: mapped.rawAction } };
  return { action: mapped.action, metadata: word === mapped.action ? {} : { actionWord: word } };
}

/** The stored event of the raw event at `index`; deduplicated only by its `id`, or the request's Idempotency-Key + index. */
export function rawAuditEvent(e: RawEvent, index: number, receivedAt: Date, idempotencyKey: string | null): NewAuditEvent {
  const action = rawAction(e.action);
  return {
    type: 'tool_call',
    source: 'raw',
    occurredAt: e.timestamp ?? receivedAt,
    serverId: e.serverId,
    sessionId: e.sessionId ?? null,
    toolName: e.toolName,
    action: action.action,
    latencyMs: e.latencyMs ?? null,
    metadata: { ...(e.metadata ?? {}), ...action.metadata, ...(e.id ? { id: e.id } : {}) },
    dedupeKey: dedupeKey('raw', e.id ? ownIdentity.raw(e.id) : null, idempotencyKey, index),
  };
}

/** The events of a body: every item must be a valid raw event, else nothing is stored (issue paths name the items). */
export function rawEvents(body: unknown, ctx: EventsContext): NewAuditEvent[] {
  let items: unknown[];
  if (typeof body === 'string') items = parseNdjson(body, ctx.limits.maxEntries);
  else if (Array.isArray(body)) items = body;
  else if (body && typeof body === 'object') items = [body];
  else throw new InvalidInput('body must be a JSON object, an array of objects, or NDJSON');
  checkEntryCount(items.length, ctx.limits.maxEntries);
  const issues: IssueDetail[] = [];
  const parsed: RawEvent[] = [];
  const single = !Array.isArray(body) && typeof body !== 'string';
  items.forEach((item, i) => {
    const r = rawEventSchema.safeParse(item);
    if (r.success) parsed.push(r.data);
    else
      for (const issue of r.error.issues.slice(0, 10)) {
        if (issues.length >= 50) break;
        const path = [...(single ? [] : [i]), ...issue.path].map(String).join('.');
        issues.push({ path: path || '(root)', message: issue.message });
      }
  });
  if (issues.length) throw new InvalidInput('some events are invalid; nothing was stored', issues);
  const events = parsed.map((e, i) => rawAuditEvent(e, i, ctx.receivedAt, ctx.idempotencyKey));
  const recognizer = ctx.recognizer;
  if (!recognizer) return events;
  // A raw event states its fields; a profile may still read it (its whole object as attributes). Never tallied as unrecognized.
  const receivedMs = ctx.receivedAt.getTime();
  return events.map((event, i) => {
    const rec = recognizer.read(messageView({ source: 'raw', message: null, fields: items[i] as Record<string, unknown>, receivedMs }));
    return rec ? applyRecognized(event, rec) : event;
  });
}

export function rawSource(): IngestSource {
  return {
    name: 'raw',
    paths: ['/events'],
    summary:
      'Raw JSON audit events: one object, an array, or NDJSON. Deduplicated by `id`, or by the Idempotency-Key header + position (a retry answers the same counts; 422 when the key was used for another request)',
    accepts: { 'application/json': 'json', 'application/x-ndjson': 'text', 'application/ndjson': 'text', 'application/jsonl': 'text' },
    idempotency: { claim: 'events' },
    documentedBody: z.union([rawEventSchema, z.array(rawEventSchema)]),
    toEvents: (body, ctx) => ({ events: rawEvents(body, ctx) }),
  };
}
