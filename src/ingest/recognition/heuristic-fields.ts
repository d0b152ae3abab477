// Pure: the audit fields found in one parsed record or text line by the word-based heuristics of key-words.ts, the last
// resort after every profile. Bounded: at most MAX_OBJECTS objects, MAX_DEPTH levels, MAX_ITEMS items per array.
import { isObject } from '../../shared/input-safety.js';
import type { Action } from '../normalize/actions.js';
import { durationInText, durationUnitOfWords, flagOutcome, keyRoleOfWords, keyWords, leadingTimestamp, parseAnyTimestamp, parseDurationMs, wordOutcome, type KeyRole } from './key-words.js';

const MAX_OBJECTS = 200;
const MAX_DEPTH = 6;
const MAX_ITEMS = 20;
const MAX_ID = 200;
/** An MCP method such as `tools/call` (not an HTTP method). */
const MCP_METHOD = /^[a-z][A-Za-z_]*(?:\/[A-Za-z_]+)+$/;

export interface Findings {
  toolName: string | null;
  action: Action | null;
  actionWord: string | null;
  serverId: string | null;
  sessionId: string | null;
  latencyMs: number | null;
  timestamp: Date | null;
  traceId: string | null;
  toolCallId: string | null;
  method: string | null;
}

export function emptyFindings(): Findings {
  return { toolName: null, action: null, actionWord: null, serverId: null, sessionId: null, latencyMs: null, timestamp: null, traceId: null, toolCallId: null, method: null };
}

function idText(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t ? t.slice(0, MAX_ID) : null;
}

interface Frame {
  obj: Record<string, unknown>;
  depth: number;
  /** The key this object sits under has a tool word (`mcp_tool_call_metadata`, `tool_info`): its `name` is a tool. */
  toolContext: boolean;
}

/** Fewer words beyond the role's own make a better candidate (`tool_name` over `namespaced_tool_name`). */
type Candidates = Partial<Record<'toolName' | 'serverId' | 'sessionId' | 'traceId' | 'toolCallId', { value: string; depth: number; extra: number }>>;

function offer(c: Candidates, field: keyof Candidates, value: string | null, depth: number, extra: number): void {
  if (value === null) return;
  const cur = c[field];
  if (!cur || depth < cur.depth || (depth === cur.depth && extra < cur.extra)) c[field] = { value, depth, extra };
}

const ROLE_FIELD: Partial<Record<KeyRole, keyof Candidates>> = { tool: 'toolName', server: 'serverId', session: 'sessionId', trace: 'traceId', callId: 'toolCallId' };

/**
 * Breadth-first over a parsed record (shallower keys win; within a level the key with fewer extra words), reading each
 * key by its role. Also: an MCP JSON-RPC request's `params.name` when `method` is `tools/call`; a `name` under a key with
 * a tool word; latency from start and end times when no duration is given.
 */
export function findInRecord(root: Record<string, unknown>): Findings {
  const f = emptyFindings();
  const c: Candidates = {};
  let start: Date | null = null;
  let end: Date | null = null;
  const queue: Frame[] = [{ obj: root, depth: 0, toolContext: false }];
  for (let i = 0; i < queue.length && i < MAX_OBJECTS; i++) {
    const { obj, depth, toolContext } = queue[i];
    for (const key of Object.keys(obj)) {
      const value = obj[key];
      if (isObject(value)) {
        if (depth < MAX_DEPTH) queue.push({ obj: value, depth: depth + 1, toolContext: keyWords(key).some((w) => w === 'tool' || w === 'function') });
        continue;
      }
      if (Array.isArray(value)) {
        if (depth < MAX_DEPTH) for (const item of value.slice(0, MAX_ITEMS)) if (isObject(item)) queue.push({ obj: item, depth: depth + 1, toolContext });
        continue;
      }
      // Each key is split into its words once.
      const words = keyWords(key);
      const role = keyRoleOfWords(words);
      readKey(f, c, key, words, role, value, depth, toolContext);
      if (words.includes('start') && role === 'time') start ??= parseAnyTimestamp(value);
      if (words.includes('end') && words.some((w) => w === 'time' || w === 'timestamp')) end ??= parseAnyTimestamp(value);
    }
    if (obj.method === 'tools/call' && isObject(obj.params)) offer(c, 'toolName', idText(obj.params.name), depth, 0);
  }
  f.toolName = c.toolName?.value ?? null;
  f.serverId = c.serverId?.value ?? null;
  f.sessionId = c.sessionId?.value ?? null;
  f.traceId = c.traceId?.value ?? null;
  f.toolCallId = c.toolCallId?.value ?? null;
  if (f.latencyMs === null && start && end && end.getTime() >= start.getTime()) f.latencyMs = end.getTime() - start.getTime();
  f.timestamp ??= start;
  return f;
}

function readKey(f: Findings, c: Candidates, key: string, words: readonly string[], role: KeyRole | null, value: unknown, depth: number, toolContext: boolean): void {
  const field = role ? ROLE_FIELD[role] : undefined;
  if (field) {
    offer(c, field, idText(value), depth, words.length);
    return;
  }
  if (toolContext && words.length === 1 && words[0] === 'name') offer(c, 'toolName', idText(value), depth, 2);
  switch (role) {
    case 'latency':
      f.latencyMs ??= parseDurationMs(value, durationUnitOfWords(words));
      return;
    case 'time':
      if (!words.includes('start')) f.timestamp ??= parseAnyTimestamp(value);
      return;
    case 'method':
      if (typeof value === 'string' && value.length <= 200 && MCP_METHOD.test(value)) f.method ??= value;
      return;
    case 'decision':
    case 'status': {
      if (f.action !== null) return;
      const out = wordOutcome(value) ?? boolDecision(key, value);
      if (out) {
        f.action = out.action;
        f.actionWord = out.word;
      }
      return;
    }
    default:
      break;
  }
  if (f.action !== null) return;
  const flag = flagOutcome(key, value, words);
  const refusal = flag ? null : errorKindRefusal(words, key, value);
  const out = flag ?? refusal;
  if (out) {
    f.action = out.action;
    f.actionWord = out.word;
  }
}

/** A decision or result written as a boolean (`"result": "true"`, an OPA allow rule): allow when true, deny when false. */
function boolDecision(key: string, value: unknown): { action: Action; word: string } | null {
  if (value === true || value === 'true') return { action: 'allow', word: `${key}=true` };
  if (value === false || value === 'false') return { action: 'deny', word: `${key}=false` };
  return null;
}

/** An error type or code whose word is a refusal (`ErrorType: Forbidden`): the call was denied. */
function errorKindRefusal(words: readonly string[], key: string, value: unknown): { action: Action; word: string } | null {
  if (!words.includes('error') || !['type', 'code', 'kind'].includes(words[words.length - 1])) return null;
  const out = wordOutcome(value);
  return out && out.action === 'deny' ? { action: 'deny', word: `${key}=${out.word}` } : null;
}

const RPC_ARROW = /([\p{L}\p{N}_.-]+)\**\s*(?:→|->)\s*`?(tools\/call)`?\s+[`'"]?([\p{L}\p{N}_.\-/:]+)/u;

/** A text line: its leading time, a duration with a unit anywhere, and `server → tools/call tool` call lines. */
export function findInText(text: string): Findings {
  const f = emptyFindings();
  const line = text.length > 4096 ? text.slice(0, 4096) : text;
  f.timestamp = leadingTimestamp(line);
  f.latencyMs = durationInText(line);
  const rpc = RPC_ARROW.exec(line);
  if (rpc) {
    f.serverId = rpc[1].slice(0, MAX_ID);
    f.method = rpc[2];
    f.toolName = rpc[3].slice(0, MAX_ID);
  }
  return f;
}
