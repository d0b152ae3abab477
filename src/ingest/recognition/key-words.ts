// Pure heuristics that generalize across log formats: key names matched by their words (split on `.`, `_`, `-`, spaces and
// camelCase) rather than by a list of spellings, boolean and numeric outcome flags, a text line's leading time, and
// durations with units anywhere in a line.
import { mapAction, type Action } from '../normalize/actions.js';
import { parseTimestamp } from '../normalize/timestamps.js';

/** Separators between a key's words: whitespace and . _ - / : @ $. */
const SEPARATOR = /[\s._\-/:@$]/;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * The lower-case words of a key: `mcp.toolName` → [mcp, tool, name]; `TimeGenerated` → [time, generated];
 * `HTTPServer` → [http, server]. One pass over at most 200 characters: a word ends at a separator, before an upper-case
 * letter that follows a lower-case letter or digit, and before the last capital of a run followed by a lower-case one.
 */
export function keyWords(key: string): string[] {
  const n = Math.min(key.length, 200);
  const words: string[] = [];
  let start = -1;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    const separator = c < 128 ? !(isUpper(c) || isLower(c) || isDigit(c)) && SEPARATOR.test(key[i]) : c >= 0xd800 && c <= 0xdfff ? false : SEPARATOR.test(key[i]);
    if (separator) {
      if (start >= 0) words.push(key.slice(start, i).toLowerCase());
      start = -1;
      continue;
    }
    if (start >= 0 && isUpper(c)) {
      const p = key.charCodeAt(i - 1);
      if (isLower(p) || isDigit(p) || (isUpper(p) && i + 1 < n && isLower(key.charCodeAt(i + 1)))) {
        words.push(key.slice(start, i).toLowerCase());
        start = i;
        continue;
      }
    }
    if (start < 0) start = i;
  }
  if (start >= 0) words.push(key.slice(start, n).toLowerCase());
  return words;
}

export type KeyRole = 'tool' | 'server' | 'session' | 'latency' | 'trace' | 'callId' | 'time' | 'decision' | 'status' | 'method';

const TOOL_WORDS = new Set(['tool', 'function', 'primitive']);
const SERVER_WORDS = new Set(['server', 'target', 'provider', 'upstream', 'backend', 'gateway']);
const SESSION_WORDS = new Set(['session', 'conversation', 'thread', 'trajectory', 'chat']);
const LATENCY_WORDS = new Set(['latency', 'duration', 'elapsed', 'took', 'runtime']);
const TIME_WORDS = new Set(['time', 'timestamp', 'ts', 'asctime', 'datetime']);
const DECISION_WORDS = new Set(['action', 'decision', 'verdict', 'outcome', 'permission', 'effect']);
const STATUS_WORDS = new Set(['status', 'result', 'state']);
const NAME_WORDS = new Set(['name', 'id', 'identifier']);

function last(words: readonly string[]): string {
  return words[words.length - 1] ?? '';
}

/**
 * What a key names, judged by its words. A tool: a tool/function word ending in `name` (or the bare word `tool`), not a
 * server's or a call id. A server: a server/target/provider/upstream/backend word ending in name/id or alone. A session:
 * session/conversation/thread/trajectory ending in id or alone. A latency: latency/duration/elapsed/took (its unit read
 * by durationUnitOf). Trace: trace + id, or traceparent. Call id: call/use + id next to tool, or call_id. Time: a
 * time/timestamp/ts word, not a duration's. Decision: action/decision/verdict/outcome/permission/effect; status:
 * status/result/state (the last word). Method: method (an MCP method when its value says so).
 */
export function keyRole(key: string): KeyRole | null {
  return keyRoleOfWords(keyWords(key));
}

/** keyRole of a key already split into its words. */
export function keyRoleOfWords(words: readonly string[]): KeyRole | null {
  if (words.length === 0) return null;
  const has = (set: Set<string>) => words.some((w) => set.has(w));
  const end = last(words);
  if (words.includes('traceparent') || (words.includes('trace') && end === 'id')) return 'trace';
  if ((words.includes('call') || words.includes('use')) && end === 'id' && (words.includes('tool') || words.length === 2)) return 'callId';
  if (has(LATENCY_WORDS)) return 'latency';
  if (has(SESSION_WORDS) && (end === 'id' || SESSION_WORDS.has(end))) return 'session';
  if (has(SERVER_WORDS) && (NAME_WORDS.has(end) || SERVER_WORDS.has(end))) return 'server';
  if (has(TOOL_WORDS) && !has(SERVER_WORDS) && (end === 'name' || (words.length === 1 && end === 'tool'))) return 'tool';
  if (has(TIME_WORDS) && !words.includes('observed') && !words.includes('end')) return 'time';
  if (DECISION_WORDS.has(end) || (words.length === 2 && DECISION_WORDS.has(words[1]) )) return 'decision';
  if (STATUS_WORDS.has(end) || (end === 'type' && words.includes('result'))) return 'status';
  if (end === 'method' || (words.length === 1 && words[0] === 'method')) return 'method';
  return null;
}

/** Multiplier from a duration key's unit word to milliseconds: `_ms` 1, `_s`/`seconds` 1000, `_ns` 1e-6, `_us` 1e-3; default ms. */
export function durationUnitOf(key: string): number {
  return durationUnitOfWords(keyWords(key));
}

/** durationUnitOf a key already split into its words. */
export function durationUnitOfWords(words: readonly string[]): number {
  for (const w of words) {
    if (w === 'ms' || w === 'millis' || w === 'milliseconds') return 1;
    if (w === 's' || w === 'sec' || w === 'secs' || w === 'seconds') return 1000;
    if (w === 'ns' || w === 'nanos' || w === 'nanoseconds') return 1e-6;
    if (w === 'us' || w === 'micros' || w === 'microseconds') return 1e-3;
  }
  return 1;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, sec: 1000, secs: 1000, seconds: 1000, m: 60_000, min: 60_000 };
const DURATION = /(?<![\w.])(\d{1,12}(?:\.\d{1,9})?)\s?(ns|us|µs|ms|secs|sec|seconds|s|min|m)(?![\p{L}\p{N}_])/u;

/** A duration with a unit (`69ms`, `1.2s`, `350µs`) as whole milliseconds; a bare number is milliseconds. */
export function parseDurationMs(value: unknown, unitMs = 1): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value * unitMs) : null;
  if (typeof value !== 'string' || value.length > 64) return null;
  const t = value.trim();
  if (/^\d{1,15}(?:\.\d{1,9})?$/.test(t)) return Math.round(Number(t) * unitMs);
  const m = new RegExp(`^${DURATION.source}$`, 'u').exec(t);
  return m ? Math.round(Number(m[1]) * UNIT_MS[m[2]]) : null;
}

/** The first duration with a unit written anywhere in a text line (`responded in 69ms`, `duration=1.2s`), in ms. */
export function durationInText(text: string): number | null {
  const window = text.length > 4096 ? text.slice(0, 4096) : text;
  const m = DURATION.exec(window);
  if (!m || m[2] === 'm' || m[2] === 'min') return null;
  return Math.round(Number(m[1]) * UNIT_MS[m[2]]);
}

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };
const LEADING_ISO = /^\[?(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)/;
const LEADING_CLF = /^\[?(\d{2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\s([+-])(\d{2})(\d{2}))?/;

/** A time at the very start of a text line: ISO 8601 (optionally in brackets, `,` or `.` fraction) or the common log format. */
export function leadingTimestamp(text: string): Date | null {
  const iso = LEADING_ISO.exec(text);
  if (iso) return parseTimestamp(iso[1].replace(',', '.'));
  const clf = LEADING_CLF.exec(text);
  if (clf) return clfDate(clf);
  return null;
}

/** A time written in the common log format (`01/Jan/2026:10:00:00 +0000`), as a whole value. */
export function parseClfTimestamp(text: string): Date | null {
  const m = LEADING_CLF.exec(text.trim());
  return m ? clfDate(m) : null;
}

function clfDate(m: RegExpExecArray): Date | null {
  const month = MONTHS[m[2].toLowerCase()];
  if (month === undefined) return null;
  let ms = Date.UTC(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  if (m[7]) ms -= (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) * 60_000;
  return Number.isFinite(ms) ? new Date(ms) : null;
}

/** A timestamp value of any common shape: ISO 8601 (also with a `,` fraction), CLF, epoch s/ms/µs/ns as number or digits. */
export function parseAnyTimestamp(value: unknown): Date | null {
  if (typeof value === 'number') return epochDate(value);
  if (typeof value !== 'string' || value.length > 64) return null;
  const t = value.trim();
  if (/^\d{10,20}$/.test(t)) return epochDate(Number(t));
  return parseTimestamp(t.replace(/(\d{2}:\d{2}:\d{2}),(\d)/, '$1.$2')) ?? parseClfTimestamp(t);
}

function epochDate(n: number): Date | null {
  if (!Number.isFinite(n) || n <= 0) return null;
  if (n >= 1e17) return parseTimestamp(Math.round(n / 1e6));
  if (n >= 1e14) return parseTimestamp(Math.round(n / 1e3));
  return parseTimestamp(n);
}

export interface FlagOutcome {
  action: Action;
  /** `key=value` as found. */
  word: string;
}

/**
 * The action an outcome flag states. Words of the key decide what the value means: success/ok/succeeded → the call ran
 * (allow, true or false); error/failed/isError → it ran and failed (allow); allowed/permitted/approved → allow when
 * true, deny when false; denied/blocked/rejected → deny when true. Boolean values, `"true"`/`"false"` strings and 0/1.
 */
export function flagOutcome(key: string, value: unknown, words: readonly string[] = keyWords(key)): FlagOutcome | null {
  const flag = flagValue(value);
  if (flag === null) return null;
  const word = `${key}=${flag}`;
  if (words.some((w) => w === 'denied' || w === 'blocked' || w === 'rejected')) return flag ? { action: 'deny', word } : null;
  if (words.some((w) => w === 'allowed' || w === 'permitted' || w === 'approved')) return { action: flag ? 'allow' : 'deny', word };
  if (words.some((w) => w === 'success' || w === 'succeeded' || w === 'ok' || w === 'error' || w === 'failed' || w === 'failure')) {
    return { action: 'allow', word };
  }
  return null;
}

function flagValue(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  if (value === 0 || value === 1) return value === 1;
  return null;
}

/** A decision or status word mapped onto the vocabulary (`denied` → deny), with the word as found. */
export function wordOutcome(value: unknown): FlagOutcome | null {
  if (typeof value !== 'string' && typeof value !== 'boolean') return null;
  const mapped = mapAction(value);
  return mapped.action ? { action: mapped.action, word: String(value).trim() } : null;
}
