// Reads the shell examples of README.md and docs/**/*.md: each ```sh block with a curl, its commands and the outputs the docs promise.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The conventions the docs follow, so their examples can be run as written:
 * - Blocks run from the repository root with `BASE` (the service), `KEY` (an API key with every scope) and
 *   `ADMIN_TOKEN` set; a line that sets one of these to a literal (`KEY=ask_…`, `BASE=http://localhost:3000`) is a
 *   placeholder for the reader and is replaced by the test's value. Every block starts from that environment alone.
 * - A comment right after a command (`# {"accepted":1,"duplicates":0}`), or at the end of its line, is its promised
 *   output when it is JSON or a 3-digit status: JSON is compared whole, where `"…"` (or a bare `…`) stands for any value
 *   and `…` inside a string for any characters. Any other comment is prose.
 * - `VAR=$(…)` must set VAR to something (not empty, not `null`).
 * - `curl -N` (a stream) is stopped after 2 s.
 */
export interface DocCommand {
  text: string;
  expected: string | null;
  assigns: string | null;
}

export interface DocBlock {
  file: string;
  line: number;
  commands: DocCommand[];
}

export function docFiles(root: string): string[] {
  const out = [path.join(root, 'README.md')];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.md')) out.push(p);
    }
  };
  walk(path.join(root, 'docs'));
  return out;
}

const PLACEHOLDER = /^(?:export\s+)?(BASE|KEY|ADMIN_TOKEN)=(?!\$\()\S*(\s+#.*)?$/;
const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=\$\(/;

/** The runnable blocks of one Markdown file, in order. */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const body = lines.slice(start, end);
    i = end;
    if (!body.some((l) => /\bcurl\s/.test(l))) continue;
    blocks.push({ file, line: start + 1, commands: parseCommands(body) });
  }
  return blocks;
}

function parseCommands(body: string[]): DocCommand[] {
  const commands: DocCommand[] = [];
  for (let i = 0; i < body.length; i++) {
    let text = body[i];
    if (!text.trim()) continue;
    if (/^\s*#/.test(text)) {
      const last = commands[commands.length - 1];
      const promised = expectation(text.replace(/^\s*#\s?/, ''));
      if (last && last.expected === null && promised !== null && commands.length > 0) last.expected = promised;
      continue;
    }
    while (text.endsWith("\\") && i + 1 < body.length) text = `${text}\n${body[++i]}`;
    if (PLACEHOLDER.test(text.trim())) continue;
    const trailing = /\s#\s*(.+)$/.exec(text.split('\n').pop() ?? '');
    const promised = trailing && !/'[^']*#/.test(text) ? expectation(trailing[1].replace(/^\d{3}\s+(?=[{[])/, '')) : null;
    commands.push({ text, expected: promised, assigns: ASSIGNMENT.exec(text)?.[1] ?? null });
  }
  return commands;
}

/** The promised output in a comment, or null for prose. */
function expectation(comment: string): string | null {
  const c = comment.trim();
  if (/^\d{3}$/.test(c)) return c;
  if (/^[{[]/.test(c) && toPattern(c) !== undefined) return c;
  return null;
}

/** Parses a promised JSON output with `…` wildcards; undefined when it is not JSON. */
export function toPattern(promised: string): unknown {
  try {
    return JSON.parse(promised.replace(/([:,[]\s*)…/g, '$1"…"'));
  } catch {
    return undefined;
  }
}

/** Whether `actual` fits `pattern` (see the conventions above). */
export function matches(pattern: unknown, actual: unknown): boolean {
  if (pattern === '…') return true;
  if (typeof pattern === 'string' && pattern.includes('…')) {
    if (typeof actual !== 'string') return false;
    const re = new RegExp(`^${pattern.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`);
    return re.test(actual);
  }
  if (Array.isArray(pattern)) return Array.isArray(actual) && actual.length === pattern.length && pattern.every((p, i) => matches(p, actual[i]));
  if (pattern && typeof pattern === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    const p = pattern as Record<string, unknown>;
    return Object.keys(p).sort().join() === Object.keys(a).sort().join() && Object.keys(p).every((k) => matches(p[k], a[k]));
  }
  return pattern === actual;
}
