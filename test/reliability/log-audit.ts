// Secret hygiene across the suite: every key, password, cookie and token a test uses is searched for in every log line it captured.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import { ADMIN_TOKEN, type RunningApp, type TestOrg } from '../helpers/app.js';

export interface Leak {
  secret: string;
  source: string;
  line: string;
}

/** The forms a secret could take in a log line: as is, JSON-escaped, URL-encoded, base64 (Basic auth). */
function formsOf(value: string): string[] {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), Buffer.from(value).toString('base64')]);
  return [...forms];
}

export function findLeaks(secrets: Record<string, string>, sources: Record<string, string>): Leak[] {
  const leaks: Leak[] = [];
  for (const [source, text] of Object.entries(sources)) {
    for (const [label, value] of Object.entries(secrets)) {
      for (const form of formsOf(value)) {
        const at = text.indexOf(form);
        if (at < 0) continue;
        const start = text.lastIndexOf('\n', at) + 1;
        const end = text.indexOf('\n', at);
        leaks.push({ secret: label, source, line: text.slice(start, end < 0 ? undefined : end).slice(0, 400) });
        break;
      }
    }
  }
  return leaks;
}

/**
 * Collects the secrets a test file uses and the log output of every app and process it starts. `assertClean()` fails
 * the file when any secret appears in any line; `persist()` leaves both for the global teardown, which cross-checks
 * the whole suite's logs against the whole suite's secrets.
 */
export class LogAudit {
  private secrets = new Map<string, string>();
  private sources: { name: string; read: () => string }[] = [];

  constructor(readonly file: string) {
    this.secret('admin token', ADMIN_TOKEN);
  }

  secret(label: string, value: string | undefined | null): void {
    if (value && value.length >= 8) this.secrets.set(`${label} (${value.slice(0, 6)}…)`, value);
  }

  org(org: TestOrg): void {
    this.secret(`API key of ${org.name}`, org.key);
    this.secret(`password of ${org.email}`, org.password);
  }

  /** A `name=value` cookie pair (as the login helper returns it). */
  cookie(pair: string): void {
    this.secret('session cookie', pair.slice(pair.indexOf('=') + 1));
  }

  app(name: string, app: RunningApp): void {
    this.sources.push({ name, read: () => app.logs.join('') });
  }

  output(name: string, read: () => string): void {
    this.sources.push({ name, read });
  }

  /** Total captured log text (to show the check is not vacuous). */
  capturedBytes(): number {
    return this.sources.reduce((n, s) => n + s.read().length, 0);
  }

  leaks(): Leak[] {
    const sources: Record<string, string> = {};
    for (const s of this.sources) sources[s.name] = (sources[s.name] ?? '') + s.read();
    return findLeaks(Object.fromEntries(this.secrets), sources);
  }

  persist(): void {
    const dir = inject('reliabilityLogDir');
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const sources: Record<string, string> = {};
    for (const s of this.sources) sources[`${this.file}: ${s.name}`] = (sources[`${this.file}: ${s.name}`] ?? '') + s.read();
    const secrets = Object.fromEntries([...this.secrets].map(([label, value]) => [`${this.file}: ${label}`, value]));
    writeFileSync(path.join(dir, `${this.file}-${process.pid}-${Date.now()}.json`), JSON.stringify({ secrets, sources }));
  }

  /** Persists, then throws listing every leak (call last, after the apps and processes were closed). */
  assertClean(): void {
    this.persist();
    const leaks = this.leaks();
    if (leaks.length) throw new Error(`secrets in log lines:\n${leaks.map((l) => `  ${l.secret} in ${l.source}: ${l.line}`).join('\n')}`);
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    reliabilityLogDir: string;
  }
}
