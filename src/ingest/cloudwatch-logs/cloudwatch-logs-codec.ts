// The CloudWatch Logs codec, shared by the cloudwatch and firehose sources: what CloudWatch Logs senders post (spec body,
// subscription payload, awslogs envelope, gzip) decoded into one LogBatch shape, validated by the zod schemas beside it.
import type { ZodType } from 'zod';
import { InvalidInput, TooLarge } from '../../shared/domain-errors.js';
import { zodIssues } from '../../shared/zod-issues.js';
import { isObject } from '../../shared/input-safety.js';
import { decodeBase64 } from '../compression.js';
import { parseMaybeGzippedJson } from '../content-types.js';
import { parseJsonText } from '../json-text.js';
import { parseTimestamp } from '../normalize/index.js';
import { checkEntryCount } from '../store-events.js';
import { awslogsEnvelopeSchema, specBodySchema, subscriptionPayloadSchema } from './cloudwatch-logs-schemas.js';

export type BatchFormat = 'spec' | 'subscription';

export interface LogEventEntry {
  /** CloudWatch event id (a digit string), when the sender gave one. */
  id: string | null;
  message: string;
  /** The event's timestamp when it parsed (ISO 8601 or epoch ms/s), else null. */
  timestamp: Date | null;
  /** The timestamp as sent, for dedupe hashes and for metadata when it did not parse. */
  rawTimestamp: string | number | null;
  extractedFields: Record<string, unknown> | null;
}

export interface LogBatch {
  format: BatchFormat;
  /** DATA_MESSAGE, CONTROL_MESSAGE (subscription payloads only). */
  messageType: string | null;
  logGroup: string;
  logStream: string;
  owner: string | null;
  subscriptionFilters: string[] | null;
  policyLevel: string | null;
  events: LogEventEntry[];
}

export const CONTROL_MESSAGE = 'CONTROL_MESSAGE';

/** Which CloudWatch body a parsed JSON value looks like; 'unknown' when none. */
export function payloadKind(body: unknown): 'awslogs' | 'subscription' | 'spec' | 'unknown' {
  if (!isObject(body)) return 'unknown';
  if ('awslogs' in body) return 'awslogs';
  if ('logEvents' in body || 'messageType' in body) return 'subscription';
  if ('events' in body || 'logGroup' in body || 'logStream' in body) return 'spec';
  return 'unknown';
}

/** True for a subscription payload whose messageType is CONTROL_MESSAGE (a health check from CloudWatch Logs). */
export function isControlMessage(body: unknown): boolean {
  return isObject(body) && body.messageType === CONTROL_MESSAGE;
}

function parseWith<T>(schema: ZodType<T>, body: unknown, prefix: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issues = zodIssues(r.error).map((i) => ({ path: prefix && i.path === '(root)' ? prefix : prefix ? `${prefix}.${i.path}` : i.path, message: i.message }));
  throw new InvalidInput('body is not a CloudWatch Logs payload of a known shape; nothing was stored', issues);
}

function entry(e: { id?: string; message: string; timestamp?: string | number | null; extractedFields?: Record<string, unknown> }): LogEventEntry {
  const raw = e.timestamp ?? null;
  return { id: e.id ?? null, message: e.message, timestamp: parseTimestamp(raw), rawTimestamp: raw, extractedFields: e.extractedFields ?? null };
}

/** TooLarge before validating when a body lists more entries than allowed. */
function checkCount(body: unknown, key: 'events' | 'logEvents', maxEntries: number): void {
  if (isObject(body) && Array.isArray(body[key])) checkEntryCount(body[key].length, maxEntries);
}

/**
 * A LogBatch from a parsed spec body or subscription payload (not the envelope). Throws InvalidInput with issue paths for
 * the wrong shape and TooLarge for too many entries. `prefix` names where the payload sat (e.g. `awslogs.data`) in issue paths.
 */
export function toLogBatch(body: unknown, maxEntries: number, prefix = ''): LogBatch {
  const kind = payloadKind(body);
  if (kind === 'subscription') {
    checkCount(body, 'logEvents', maxEntries);
    const p = parseWith(subscriptionPayloadSchema, body, prefix);
    return {
      format: 'subscription',
      messageType: p.messageType,
      logGroup: p.logGroup,
      logStream: p.logStream,
      owner: p.owner ?? null,
      subscriptionFilters: p.subscriptionFilters ?? null,
      policyLevel: p.policyLevel ?? null,
      events: p.logEvents.map(entry),
    };
  }
  if (kind === 'spec' || kind === 'unknown') {
    checkCount(body, 'events', maxEntries);
    const p = parseWith(specBodySchema, body, prefix);
    return {
      format: 'spec',
      messageType: null,
      logGroup: p.logGroup,
      logStream: p.logStream,
      owner: p.owner ?? null,
      subscriptionFilters: null,
      policyLevel: null,
      events: p.events.map(entry),
    };
  }
  throw new InvalidInput('an awslogs envelope cannot be nested inside another payload', [{ path: prefix || '(root)', message: 'unexpected awslogs' }]);
}

/** The value of a decoded text when it is one JSON object (integers beyond 2^53 kept as digit strings), else null. */
export function jsonObjectOrNull(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return null;
  try {
    return parseJsonText(t);
  } catch {
    return null;
  }
}

/** The subscription payload a decoded text holds (e.g. a Firehose record's line), else null. */
export function subscriptionPayloadOf(text: string): unknown {
  const json = jsonObjectOrNull(text);
  return payloadKind(json) === 'subscription' ? json : null;
}

/** The subscription payload inside `{"awslogs":{"data":"<base64 of gzip>"}}`, decoded and bounded by `limit` bytes. */
export async function decodeAwslogsEnvelope(body: unknown, limit: number): Promise<unknown> {
  const env = parseWith(awslogsEnvelopeSchema, body, '');
  const bytes = decodeBase64(env.awslogs.data);
  if (bytes === null || bytes.length === 0) throw new InvalidInput('awslogs.data is not base64', [{ path: 'awslogs.data', message: 'must be base64 of the gzipped subscription payload' }]);
  try {
    return await parseMaybeGzippedJson(bytes, limit, 'awslogs.data');
  } catch (err) {
    if (err instanceof TooLarge) throw err;
    throw new InvalidInput('awslogs.data could not be decoded', [{ path: 'awslogs.data', message: (err as Error).message }]);
  }
}

export interface DecodedCloudWatchBody {
  /** How it arrived: the spec body, a subscription payload, or a subscription payload in the awslogs envelope. */
  envelope: 'none' | 'awslogs';
  /** Null for a CONTROL_MESSAGE, which stores nothing. */
  batch: LogBatch | null;
}

/** Any CloudWatch body the /cloudwatch route accepts, already JSON-parsed (and gunzipped) by the body parser. */
export async function decodeCloudWatchBody(body: unknown, opts: { limit: number; maxEntries: number }): Promise<DecodedCloudWatchBody> {
  if (!isObject(body)) {
    throw new InvalidInput('body must be a JSON object: the spec body {logGroup, logStream, events}, a subscription payload {messageType, logGroup, logStream, logEvents} or {awslogs:{data}}', [
      { path: '(root)', message: `expected an object, got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}` },
    ]);
  }
  if (payloadKind(body) === 'awslogs') {
    const inner = await decodeAwslogsEnvelope(body, opts.limit);
    if (isControlMessage(inner)) return { envelope: 'awslogs', batch: null };
    return { envelope: 'awslogs', batch: toLogBatch(inner, opts.maxEntries, 'awslogs.data') };
  }
  if (isControlMessage(body)) return { envelope: 'none', batch: null };
  return { envelope: 'none', batch: toLogBatch(body, opts.maxEntries) };
}
