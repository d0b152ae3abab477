// Input safety: the named nesting limits, the one sanitizer for text Postgres cannot store, and shape checks of JSON.
import { InvalidInput } from './domain-errors.js';
import { setOwn } from './own-keys.js';

/** Deepest nesting of arrays and objects in a JSON request body, checked on the text before anything parses it. */
export const MAX_BODY_DEPTH = 64;
/** Deepest nesting of a raw ingest event's `metadata` object (the raw endpoint's documented bound). */
export const MAX_METADATA_DEPTH = 32;
/** Deepest nesting the write path stores: the last guard for values built by code rather than parsed from a body. */
export const MAX_STORED_DEPTH = 64;

/** A non-null, non-array object, such as a parsed JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` nests objects/arrays deeper than `max` levels. Iterative: never recurses, so any depth is safe. */
export function nestsDeeper(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
  return false;
}

/**
 * The index of the quote that closes a JSON string whose text starts at `start` (just after its opening quote): the
 * next quote not escaped, i.e. not preceded by an odd run of backslashes inside the string; -1 when it is unterminated.
 * Jumps from quote to quote instead of reading every character.
 */
export function closingQuoteIndex(text: string, start: number): number {
  for (let from = start; ; ) {
    const q = text.indexOf('"', from);
    if (q === -1) return -1;
    let slashes = 0;
    while (q - slashes - 1 >= start && text.charCodeAt(q - slashes - 1) === 0x5c) slashes++;
    if (slashes % 2 === 0) return q;
    from = q + 1;
  }
}

/** True when `text` holds at most `max` opening brackets (`{` or `[`, in strings too): it cannot nest deeper. */
function fewBrackets(text: string, max: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) if (++count > max) return false;
  }
  return true;
}

/** True when JSON text nests arrays/objects deeper than `max` (strings are skipped; invalid JSON is not judged here). */
export function textNestsDeeper(text: string, max: number): boolean {
  // Most texts hold fewer brackets than the limit: counting them (native searches) settles it without reading the rest.
  if (fewBrackets(text, max)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuoteIndex(text, i + 1);
      if (i === -1) return false;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Thrown when a value to store nests deeper than the limit Postgres and the stack should have to follow. */
export class TooDeep extends InvalidInput {
  constructor(max: number) {
    super(`metadata nests deeper than ${max} levels`);
  }
}

/** `s` with U+0000 and unpaired UTF-16 surrogates replaced by U+FFFD (Postgres text and jsonb hold neither). */
export function storableText(s: string): string {
  let out = s;
  if (out.includes('\u0000')) out = out.replaceAll('\u0000', '\uFFFD');
  if (!out.isWellFormed()) out = out.toWellFormed();
  return out;
}

/**
 * `value` with every string and key made storable (see storableText); keys like `__proto__` stay plain data. The value
 * itself when nothing needs replacing (the usual case: checking allocates nothing), else a copy. Throws TooDeep when it
 * nests deeper than `maxDepth`, so hostile input cannot exhaust the stack.
 */
export function storable<T>(value: T, maxDepth = MAX_STORED_DEPTH): T {
  return needsChange(value, 0, maxDepth) ? copy(value, 0, maxDepth) : value;
}

function copy<T>(value: T, depth: number, maxDepth: number): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (depth >= maxDepth) throw new TooDeep(maxDepth);
  if (Array.isArray(value)) return value.map((v) => copy(v, depth + 1, maxDepth)) as T;
  const out: Record<string, unknown> = {};
  // setOwn keeps a "__proto__" key as plain data instead of changing the object's prototype.
  for (const [k, v] of Object.entries(value)) setOwn(out, storableText(k), copy(v, depth + 1, maxDepth));
  return out as T;
}

/** True when storable would change `value` (a NUL or an unpaired surrogate in a string or a key) or refuse it. */
function needsChange(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || !value.isWellFormed();
  if (value === null || typeof value !== 'object' || value instanceof Date) return false;
  if (depth >= maxDepth) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (needsChange(v, depth + 1, maxDepth)) return true;
    return false;
  }
  // for...in with an own-key guard visits what Object.keys lists, without allocating the array (this runs for every event).
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (needsChange(k, 0, maxDepth) || needsChange((value as Record<string, unknown>)[k], depth + 1, maxDepth)) return true;
  }
  return false;
}
