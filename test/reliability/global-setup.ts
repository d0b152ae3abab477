// Suite-wide log capture: each file leaves its logs and secrets in one directory; teardown searches all logs for all secrets.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { findLeaks } from './log-audit.js';

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(path.join(tmpdir(), 'audit-stream-reliability-logs-'));
  project.provide('reliabilityLogDir', dir);
  return () => {
    const secrets: Record<string, string> = {};
    const sources: Record<string, string> = {};
    let files = 0;
    for (const f of readdirSync(dir)) {
      const d = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { secrets: Record<string, string>; sources: Record<string, string> };
      Object.assign(secrets, d.secrets);
      Object.assign(sources, d.sources);
      files++;
    }
    const leaks = findLeaks(secrets, sources);
    const bytes = Object.values(sources).reduce((n, s) => n + s.length, 0);
    console.log(`log audit: ${Object.keys(secrets).length} secrets searched in ${bytes} bytes of logs from ${Object.keys(sources).length} sources (${files} files)`);
    if (leaks.length) {
      console.error(`log audit: secrets in log lines:\n${leaks.map((l) => `  ${l.secret} in ${l.source}: ${l.line}`).join('\n')}`);
      // A teardown cannot fail a test; it fails the run.
      process.exitCode = 1;
      return;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
