// Normalizes Datadog webhook events: parses their tags and reads tool-call fields from the body, tags and title.
import { mapAction } from './actions.js';
import { emptyHints, mergeHints, toNormalized, withResolvedTraceId, type Hints } from './hints.js';
import { parseJsonObject } from './json-message.js';
import { parseLogfmtMessage } from './logfmt.js';
import { analyzeMessage, type MessageFindings } from './message.js';
import { SCAN_WINDOW, idString, truncate } from './strings.js';
import { isObject } from '../../shared/input-safety.js';
import { emptyNormalized, type Normalized } from './types.js';

export interface DatadogInput {
  title?: string | null;
  body?: string | null;
  tags?: string | string[] | null;
}

export type NormalizedDatadog = Normalized & { tags: Record<string, string[]>; service: string | null };

const MAX_TAGS = 1000;

/**
 * Datadog tags as a map of key to values: `"env:prod, service:agent-gw, monitor"` →
 * `{ env: ['prod'], service: ['agent-gw'], monitor: [''] }`. Accepts a comma- and/or space-separated
 * string or an array of such strings. Keys are lower-cased (as Datadog does), split from the value at
 * the first `:`; repeated values are kept once; keys and values are cut to 200 characters. Never throws.
 */
export function parseDatadogTags(tags: string | string[] | null | undefined): Record<string, string[]> {
  try {
    const parts: string[] = [];
    const sources: unknown[] = Array.isArray(tags) ? tags.slice(0, MAX_TAGS) : [tags];
    for (const source of sources) {
      if (typeof source !== 'string') continue;
      const window = source.length > SCAN_WINDOW ? source.slice(0, SCAN_WINDOW) : source;
      for (const part of window.split(/[,\s]+/)) {
        if (part) parts.push(part);
        if (parts.length >= MAX_TAGS) break;
      }
      if (parts.length >= MAX_TAGS) break;
    }
    // A prototype-less accumulator makes `__proto__` an ordinary key; spreading copies it as plain data.
    const acc = Object.create(null) as Record<string, string[]>;
    for (const part of parts) {
      const colon = part.indexOf(':');
      const key = truncate((colon === -1 ? part : part.slice(0, colon)).toLowerCase());
      const value = colon === -1 ? '' : truncate(part.slice(colon + 1));
      if (!key) continue;
      const values = (acc[key] ??= []);
      if (!values.includes(value)) values.push(value);
    }
    return { ...acc };
  } catch {
    return {};
  }
}

/** The body without Datadog's `%%%` markdown markers or a surrounding ``` code fence. */
export function stripDatadogMarkdown(body: string): string {
  let text = body.trim();
  if (text.startsWith('%%%')) text = text.slice(3);
  if (text.endsWith('%%%')) text = text.slice(0, -3);
  text = text.trim();
  const fence = /^```[\w-]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text.length <= SCAN_WINDOW ? text : '');
  return fence ? fence[1].trim() : text;
}

function firstTag(tags: Record<string, string[]>, ...keys: string[]): string | null {
  for (const key of keys) {
    const values = Object.prototype.hasOwnProperty.call(tags, key) ? tags[key] : undefined;
    const value = values ? values.map((v) => idString(v)).find((v) => v !== null) : undefined;
    if (value) return value;
  }
  return null;
}

function tagHints(tags: Record<string, string[]>): Hints {
  const word = firstTag(tags, 'action');
  const action = mapAction(word);
  return {
    ...emptyHints(),
    toolName: firstTag(tags, 'tool', 'tool_name'),
    action: action.action,
    rawAction: action.rawAction,
    actionWord: action.action === null ? null : word,
    serverId: firstTag(tags, 'server', 'server_id', 'mcp_server'),
    sessionId: firstTag(tags, 'session', 'session_id'),
  };
}

/**
 * The body read as one log message; when that is only text (say, an @-mention line and then a JSON log line),
 * the first line that is a JSON object or logfmt, merged with the text hints of the whole body.
 */
function bodyFindings(text: string): MessageFindings {
  const whole = analyzeMessage(text);
  if (whole.format !== 'text') return whole;
  const window = text.length > SCAN_WINDOW ? text.slice(0, SCAN_WINDOW) : text;
  for (const line of window.split(/\r?\n/, 200)) {
    const candidate = line.trim();
    if (!candidate || (parseJsonObject(candidate) === null && parseLogfmtMessage(candidate) === null)) continue;
    const structured = analyzeMessage(candidate);
    return { ...structured, hints: mergeHints(withResolvedTraceId(structured.hints), withResolvedTraceId(whole.hints)) };
  }
  return whole;
}

function bodyText(body: unknown): string | null {
  if (typeof body === 'string') return stripDatadogMarkdown(body);
  if (isObject(body)) return JSON.stringify(body);
  return null;
}

/**
 * Normalizes a Datadog webhook event. Each field comes from the body first (`%%%` markers stripped, then
 * read as JSON, logfmt or text like any log message, or else its first JSON/logfmt line), then from the tags (`tool:`, `action:`, `server:`,
 * `session:`), then from the title text. For the action, a word that maps to the vocabulary beats an
 * unmapped one from an earlier source. `service` is the first value of the `service` tag. Never throws.
 */
export function normalizeDatadog(input: DatadogInput): NormalizedDatadog {
  let tags: Record<string, string[]> = {};
  try {
    const source: Record<string, unknown> = isObject(input) ? (input as Record<string, unknown>) : {};
    tags = parseDatadogTags(source.tags as string | string[] | null | undefined);
    const bodyString = bodyText(source.body);
    const body = bodyString !== null ? bodyFindings(bodyString) : null;
    const title = typeof source.title === 'string' ? analyzeMessage(source.title) : null;
    const sources = [body ? body.hints : emptyHints(), tagHints(tags), title ? title.hints : emptyHints()];
    const hints = mergeHints(...sources.map(withResolvedTraceId));
    const service = firstTag(tags, 'service');
    return { ...toNormalized(hints, 'datadog', body ? body.fields : {}), tags, service };
  } catch {
    return { ...emptyNormalized('datadog'), tags, service: null };
  }
}
