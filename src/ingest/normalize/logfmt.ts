// Parses logfmt lines: key=value pairs, double-quoted values with backslash escapes, bare keys.
import { MAX_STRUCTURED_CHARS } from './strings.js';
import { setOwn } from '../../shared/own-keys.js';

/** At most this many tokens are read from one line. */
const MAX_TOKENS = 1000;
const MAX_KEY_LENGTH = 200;
const KEY = /^[\p{L}\p{N}_@$][\p{L}\p{N}_.\-/@:$[\]]*$/u;

type Token = { kind: 'pair'; key: string; value: string } | { kind: 'bare'; key: string } | { kind: 'junk' };

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}

function isKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && KEY.test(key);
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', '\\': '\\', '/': '/' };

/** Reads a double-quoted string starting at `start` (the quote); an unterminated one runs to `end`. */
function readQuoted(line: string, start: number, end: number): { value: string; next: number } {
  const parts: string[] = [];
  let i = start + 1;
  let chunk = i;
  while (i < end) {
    const ch = line[i];
    if (ch === '"') {
      parts.push(line.slice(chunk, i));
      return { value: parts.join(''), next: i + 1 };
    }
    if (ch === '\\' && i + 1 < end) {
      parts.push(line.slice(chunk, i));
      const esc = line[i + 1];
      if (esc === 'u' && /^[0-9a-fA-F]{4}$/.test(line.slice(i + 2, i + 6))) {
        parts.push(String.fromCharCode(parseInt(line.slice(i + 2, i + 6), 16)));
        i += 6;
      } else {
        parts.push(Object.prototype.hasOwnProperty.call(ESCAPES, esc) ? ESCAPES[esc] : esc);
        i += 2;
      }
      chunk = i;
      continue;
    }
    i++;
  }
  parts.push(line.slice(chunk, end));
  return { value: parts.join(''), next: end };
}

function tokenize(line: string): Token[] {
  const tokens: Token[] = [];
  const end = Math.min(line.length, MAX_STRUCTURED_CHARS);
  let i = 0;
  while (i < end && tokens.length < MAX_TOKENS) {
    while (i < end && isSpace(line.charCodeAt(i))) i++;
    if (i >= end) break;
    if (line[i] === '"') {
      i = readQuoted(line, i, end).next;
      tokens.push({ kind: 'junk' });
      continue;
    }
    const keyStart = i;
    while (i < end && !isSpace(line.charCodeAt(i)) && line[i] !== '=' && line[i] !== '"') i++;
    const key = line.slice(keyStart, i);
    if (i < end && line[i] === '=') {
      i++;
      let value: string;
      if (i < end && line[i] === '"') {
        const quoted = readQuoted(line, i, end);
        value = quoted.value;
        i = quoted.next;
      } else {
        const valueStart = i;
        while (i < end && !isSpace(line.charCodeAt(i))) i++;
        value = line.slice(valueStart, i);
      }
      tokens.push(isKey(key) ? { kind: 'pair', key, value } : { kind: 'junk' });
    } else if (i < end && line[i] === '"') {
      // Something like foo"bar": not logfmt; skip the rest of the token.
      while (i < end && !isSpace(line.charCodeAt(i))) i++;
      tokens.push({ kind: 'junk' });
    } else {
      tokens.push(isKey(key) ? { kind: 'bare', key } : { kind: 'junk' });
    }
  }
  return tokens;
}

function toRecord(tokens: Token[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (const token of tokens) {
    if (token.kind === 'pair') setOwn(record, token.key, token.value);
    else if (token.kind === 'bare' && !Object.prototype.hasOwnProperty.call(record, token.key)) setOwn(record, token.key, '');
  }
  return record;
}

/**
 * The key=value pairs of a logfmt line (bare keys map to ''; a repeated key keeps its last value),
 * or null if the line has no key=value pair. Tokens that are not keys are ignored. Never throws.
 */
export function parseLogfmt(line: string): Record<string, string> | null {
  try {
    if (typeof line !== 'string') return null;
    const tokens = tokenize(line);
    return tokens.some((t) => t.kind === 'pair') ? toRecord(tokens) : null;
  } catch {
    return null;
  }
}

/** Like parseLogfmt, but only when the line reads as logfmt: at least one pair, and pairs are most of its tokens. */
export function parseLogfmtMessage(line: string): Record<string, string> | null {
  const tokens = tokenize(line);
  const pairs = tokens.filter((t) => t.kind === 'pair').length;
  return pairs > 0 && pairs * 2 > tokens.length ? toRecord(tokens) : null;
}
