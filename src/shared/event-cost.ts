// The one bound on what a stored event may cost, whatever made it: text columns capped, the whole event (metadata
// included) at most maxEventBytes of JSON, the largest values cut with the `[truncated]` marker until it fits. Pure.
import type { NewAuditEvent } from '../audit/audit-types.js';
import { MAX_STORED_DEPTH, TooDeep } from './input-safety.js';
import { setOwn } from './own-keys.js';

/** The marker a cut value ends with (a string) or is replaced by (anything else); an object's left-out keys are counted under it. */
export const TRUNCATED = '[truncated]';
/** Longest server id, session id, tool name and action kept (characters), as the sources' own id bound. */
export const MAX_COLUMN_CHARS = 200;
/** The smallest INGEST_MAX_EVENT_BYTES: room for the capped columns and a dedupe key with metadata left over. */
export const MIN_EVENT_BYTES = 16 * 1024;

/** JSON bytes of TRUNCATED as a string value: what any value can always be cut to. */
const MARKER_BYTES = TRUNCATED.length + 2;
/** Characters JSON writes escaped: a string without them takes its UTF-8 bytes plus two quotes. */
// eslint-disable-next-line no-control-regex -- the control characters are what is looked for
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
/** What the stored record spends on field names and punctuation besides its values (an over-estimate). */
const RECORD_OVERHEAD = 160;

export interface EventCostBound {
  /** INGEST_MAX_EVENT_BYTES: the most bytes of JSON (UTF-8) an event's fields and metadata take. */
  maxEventBytes: number;
}

/** `s` cut to at most `maxChars` UTF-16 units, ending with TRUNCATED when it was longer (never half a surrogate pair). */
export function capText(s: string, maxChars: number): string {
  if (s.length <= maxChars) return s;
  let end = Math.max(0, maxChars - TRUNCATED.length);
  if (end > 0 && isHighSurrogate(s.charCodeAt(end - 1))) end -= 1;
  return s.slice(0, end) + TRUNCATED;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** Bytes one UTF-16 unit takes in JSON text (a surrogate pair: 2 + 2; a lone surrogate: 3, as U+FFFD once made storable). */
function charBytes(c: number): number {
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (isHighSurrogate(c) || isLowSurrogate(c)) return 2;
  return 3;
}

/** The bytes of `s` as a JSON string (quotes included). */
export function jsonStringBytes(s: string): number {
  if (!NEEDS_ESCAPE.test(s)) return Buffer.byteLength(s, 'utf8') + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A lone surrogate is stored as U+FFFD (3 bytes); a pair as 4 (2 + 2 above).
    if (isHighSurrogate(c) ? !isLowSurrogate(s.charCodeAt(i + 1)) : isLowSurrogate(c) && !isHighSurrogate(s.charCodeAt(i - 1))) n += 3;
    else n += charBytes(c);
  }
  return n;
}

/** `s` cut so that, with TRUNCATED after it, it takes at most `budget` bytes as a JSON string (budget >= MARKER_BYTES). */
function cutString(s: string, budget: number): string {
  let room = budget - MARKER_BYTES;
  let end = 0;
  while (end < s.length) {
    const c = s.charCodeAt(end);
    const pair = isHighSurrogate(c) && isLowSurrogate(s.charCodeAt(end + 1));
    const cost = pair ? 4 : isHighSurrogate(c) || isLowSurrogate(c) ? 3 : charBytes(c);
    if (cost > room) break;
    room -= cost;
    end += pair ? 2 : 1;
  }
  return s.slice(0, end) + TRUNCATED;
}

/** A value JSON.stringify leaves out of an object (and writes as null in an array). */
function isSkipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  return typeof v === 'object' && v !== null && !(v instanceof Date);
}

/** Bytes of a scalar as JSON (a Date as its ISO string; non-finite numbers as null). */
function scalarBytes(v: unknown): number {
  if (typeof v === 'string') return jsonStringBytes(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v).length : 4;
  if (typeof v === 'boolean') return v ? 4 : 5;
  if (typeof v === 'bigint') return v.toString().length;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 4 : 26;
  return 4;
}

/**
 * A cheap upper bound of a value's JSON bytes, reading only string lengths (a UTF-16 unit takes at most 6 bytes, as
 * `\uXXXX`). Throws TooDeep past MAX_STORED_DEPTH, as the write path would.
 */
function upperBound(v: unknown, depth: number): number {
  if (typeof v === 'string') return 6 * v.length + 2;
  if (!isContainer(v)) return 26;
  if (depth >= MAX_STORED_DEPTH) throw new TooDeep(MAX_STORED_DEPTH);
  let n = 2;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += 1 + upperBound(v[i], depth + 1);
    return n;
  }
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) n += 6 * keys[i].length + 4 + upperBound(v[keys[i]], depth + 1);
  return n;
}

/** Exact JSON bytes of values, each container measured once per event. */
class Sizes {
  private readonly known = new Map<object, number>();

  of(v: unknown, depth = 0): number {
    if (!isContainer(v)) return scalarBytes(v);
    const cached = this.known.get(v);
    if (cached !== undefined) return cached;
    if (depth >= MAX_STORED_DEPTH) throw new TooDeep(MAX_STORED_DEPTH);
    let n = 2;
    let entries = 0;
    if (Array.isArray(v)) {
      for (const item of v) n += isSkipped(item) ? 4 : this.of(item, depth + 1);
      entries = v.length;
    } else {
      for (const k of Object.keys(v)) {
        const item = v[k];
        if (isSkipped(item)) continue;
        n += jsonStringBytes(k) + 1 + this.of(item, depth + 1);
        entries++;
      }
    }
    n += Math.max(0, entries - 1);
    this.known.set(v, n);
    return n;
  }
}

/**
 * The largest share `level` such that sum(min(size, level)) <= budget (values no larger than the level kept whole, the
 * others cut to it); Infinity when every value fits whole. `sizes` need not be sorted.
 */
function waterLevel(sizes: readonly number[], budget: number): number {
  const sorted = [...sizes].sort((a, b) => a - b);
  let left = budget;
  for (let i = 0; i < sorted.length; i++) {
    const share = Math.floor(left / (sorted.length - i));
    if (sorted[i] > share) return share;
    left -= sorted[i];
  }
  return Infinity;
}

/** Fits values into byte budgets by cutting the largest first. */
class Fitter {
  constructor(private readonly sizes: Sizes) {}

  /** `v` itself when it takes at most `budget` bytes, else a cut copy that does (budget >= MARKER_BYTES). */
  fit(v: unknown, budget: number): unknown {
    if (this.sizes.of(v) <= budget) return v;
    if (typeof v === 'string') return cutString(v, budget);
    if (Array.isArray(v)) return this.fitArray(v, budget) ?? TRUNCATED;
    if (isContainer(v)) return this.fitObject(v as Record<string, unknown>, budget) ?? TRUNCATED;
    return TRUNCATED;
  }

  /**
   * How many leading entries to keep: all of them when each fits at least as the marker; else the most that do with
   * `tail(left)` bytes after them (the marker of the `left` entries left out); null when not even the tail alone fits.
   * `overheads`: what an entry takes besides its value (an object's key and colon).
   */
  private keptCount(overheads: readonly number[], sizes: readonly number[], budget: number, tail: (left: number) => number): number | null {
    const n = sizes.length;
    const smallest = (i: number) => overheads[i] + Math.min(sizes[i], MARKER_BYTES);
    let all = 2 + Math.max(0, n - 1);
    for (let i = 0; i < n; i++) all += smallest(i);
    if (all <= budget) return n;
    let kept: number | null = 2 + tail(n) <= budget ? 0 : null;
    // Each kept entry is followed by a comma (the tail comes after the last); `used` only grows faster than tail shrinks.
    let used = 2;
    for (let k = 1; k < n && kept !== null; k++) {
      used += smallest(k - 1) + 1;
      if (used + tail(n - k) > budget) break;
      kept = k;
    }
    return kept;
  }

  /** The values cut to a common level so that, with `fixed` bytes around them, they fit `budget`. */
  private fitValues(values: readonly unknown[], sizes: readonly number[], fixed: number, budget: number): unknown[] {
    const level = waterLevel(sizes, budget - fixed);
    return values.map((v, i) => (sizes[i] <= level ? v : this.fit(v, level)));
  }

  /** Bytes of an array's or object's braces, commas, entry overheads and tail, keeping `k` of `n` entries. */
  private static fixedBytes(overheads: readonly number[], k: number, n: number, tail: (left: number) => number): number {
    let fixed = 2 + (k < n ? k + tail(n - k) : Math.max(0, n - 1));
    for (let i = 0; i < k; i++) fixed += overheads[i];
    return fixed;
  }

  /** An array cut to `budget`: its first elements (the largest cut to a common level), then TRUNCATED for the rest. */
  private fitArray(v: readonly unknown[], budget: number): unknown[] | null {
    const items = v.map((x) => (isSkipped(x) ? null : x));
    const sizes = items.map((x) => this.sizes.of(x));
    const overheads = sizes.map(() => 0);
    const tail = () => MARKER_BYTES;
    const k = this.keptCount(overheads, sizes, budget, tail);
    if (k === null) return null;
    const out = this.fitValues(items.slice(0, k), sizes.slice(0, k), Fitter.fixedBytes(overheads, k, items.length, tail), budget);
    if (k < items.length) out.push(TRUNCATED);
    return out;
  }

  /**
   * An object cut to `budget`: its first keys (the largest values cut to a common level); the number of keys left out,
   * if any, under the key TRUNCATED.
   */
  private fitObject(v: Record<string, unknown>, budget: number): Record<string, unknown> | null {
    const keys = Object.keys(v).filter((k) => !isSkipped(v[k]));
    const overheads = keys.map((k) => jsonStringBytes(k) + 1);
    const sizes = keys.map((k) => this.sizes.of(v[k]));
    const tail = (left: number) => MARKER_BYTES + 1 + String(left).length;
    const k = this.keptCount(overheads, sizes, budget, tail);
    if (k === null) return null;
    const fixed = Fitter.fixedBytes(overheads, k, keys.length, tail);
    const values = this.fitValues(
      keys.slice(0, k).map((key) => v[key]),
      sizes.slice(0, k),
      fixed,
      budget,
    );
    const out: Record<string, unknown> = {};
    for (let i = 0; i < k; i++) setOwn(out, keys[i], values[i]);
    if (k < keys.length) setOwn(out, TRUNCATED, keys.length - k);
    return out;
  }
}

type Column = 'serverId' | 'sessionId' | 'toolName' | 'action';
const COLUMNS: readonly Column[] = ['serverId', 'sessionId', 'toolName', 'action'];

/** The bytes of the event's fields other than metadata, as stored (an over-estimate of names and punctuation). */
function fieldBytes(e: NewAuditEvent, exact: boolean): number {
  let n = RECORD_OVERHEAD + e.type.length + e.source.length + (e.latencyMs == null ? 4 : 11);
  const text = (s: string) => (exact ? jsonStringBytes(s) : 6 * s.length + 2);
  for (const c of COLUMNS) {
    const v = e[c];
    n += typeof v === 'string' ? text(v) : 4;
  }
  n += text(e.dedupeKey);
  if (e.payload != null) n += exact ? new Sizes().of(e.payload) : upperBound(e.payload, 0);
  return n;
}

/** `e` with its server id, session id, tool name and action at most MAX_COLUMN_CHARS (cut ones end with TRUNCATED). */
function capColumns(e: NewAuditEvent): NewAuditEvent {
  let out = e;
  for (const c of COLUMNS) {
    const v = e[c];
    if (typeof v === 'string' && v.length > MAX_COLUMN_CHARS) {
      if (out === e) out = { ...e };
      out[c] = capText(v, MAX_COLUMN_CHARS);
    }
  }
  return out;
}

/**
 * `e` within the bound. Its server id, session id, tool name and action are at most MAX_COLUMN_CHARS (cut ones end
 * with TRUNCATED). Then it is itself when its fields and metadata take at most `maxEventBytes` of JSON (the usual case,
 * told from string lengths alone); else a copy whose metadata is cut to the room its fields leave: an object or array
 * keeps its entries whole when they fit; otherwise every value larger than an equal share of the room is cut to that
 * share (recursively; a string keeps its start and ends with TRUNCATED; any other value too large becomes TRUNCATED),
 * and when even the smallest forms of all entries do not fit, the first ones are kept and the number left out is
 * stored under TRUNCATED (arrays end with it). Deterministic: the same event always gives the same result. The dedupe
 * key, times and a stored payload are never cut (the sources bound them). Throws TooDeep for metadata nested deeper
 * than the write path stores.
 */
export function boundEvent(e: NewAuditEvent, bound: EventCostBound): NewAuditEvent {
  const out = capColumns(e);
  const metadata = out.metadata ?? {};
  if (fieldBytes(out, false) + upperBound(metadata, 0) <= bound.maxEventBytes) return out;
  const sizes = new Sizes();
  const room = Math.max(MARKER_BYTES + 2, bound.maxEventBytes - fieldBytes(out, true));
  if (sizes.of(metadata) <= room) return out;
  const fitted = new Fitter(sizes).fit(metadata, room);
  return { ...out, metadata: isContainer(fitted) && !Array.isArray(fitted) ? fitted : {} };
}

/** Every event within the bound (see boundEvent), in order. */
export function boundEvents(events: readonly NewAuditEvent[], bound: EventCostBound): NewAuditEvent[] {
  return events.map((e) => boundEvent(e, bound));
}
