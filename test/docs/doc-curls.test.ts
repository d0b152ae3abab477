// Every documented curl example (README.md and docs/**/*.md) runs as written against a real server and prints what the
// docs say it prints; the conventions that make that possible are in doc-commands.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { realBackendAvailable } from '../helpers/backends.js';
import { ADMIN_TOKEN, createOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { docBlocks, docFiles, matches, toPattern, type DocBlock } from './doc-commands.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const files = docFiles(ROOT);

/** The block as a bash script: each command with a promised output writes it to out.<n>; assignments are checked. */
function script(block: DocBlock): string {
  const lines = ['set -euo pipefail'];
  block.commands.forEach((c, n) => {
    const text = c.text.replace(/\bcurl -N\b/g, 'curl -N --max-time 2');
    const stream = text !== c.text;
    if (c.assigns) {
      lines.push(text, `[ -n "\${${c.assigns}}" ] && [ "\${${c.assigns}}" != null ] || { echo "line ${n}: ${c.assigns} is empty" >&2; exit 90; }`);
    } else if (c.expected !== null) {
      lines.push(`{ ${text}\n} > out.${n}`);
    } else {
      lines.push(stream ? `{ ${text}\n} > /dev/null || [ $? -eq 28 ]` : text);
    }
  });
  return `${lines.join('\n')}\n`;
}

/** Runs a script with bash without blocking this process (the server under test lives in it). */
function bash(cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn('bash', ['block.sh'], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 120_000);
    proc.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

describe('documented curl examples', () => {
  // A secrets key of its own: docs/proxy.md registers a secret upstream header (the real backend has no generated one).
  const { app } = suiteApp(realBackendAvailable ? 'real' : 'embedded', { PROXY_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64') });

  it('finds the examples: README.md and docs/ have runnable blocks with promised outputs, and examples/ every sample they use', () => {
    expect(docBlocks(path.join(ROOT, 'README.md')).length).toBeGreaterThanOrEqual(2);
    const all = files.flatMap((f) => docBlocks(f));
    expect(all.length).toBeGreaterThanOrEqual(8);
    expect(all.flatMap((b) => b.commands).filter((c) => c.expected !== null).length).toBeGreaterThanOrEqual(15);
    const used = new Set(files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/examples\/([\w.-]+)/g)].map((m) => m[1])));
    for (const f of ['raw-event.json', 'raw-events.ndjson', 'cloudwatch-spec.json', 'cloudwatch-subscription.json', 'awslogs-event.json', 'firehose-request.json', 'datadog-webhook.json']) {
      expect(used, f).toContain(f);
    }
  });

  it('ships an awslogs event and a Firehose record that hold exactly the subscription payload of examples/', () => {
    const sub = JSON.parse(readFileSync(path.join(ROOT, 'examples/cloudwatch-subscription.json'), 'utf8'));
    const awslogs = JSON.parse(readFileSync(path.join(ROOT, 'examples/awslogs-event.json'), 'utf8'));
    expect(JSON.parse(gunzipSync(Buffer.from(awslogs.awslogs.data, 'base64')).toString())).toEqual(sub);
    const firehose = JSON.parse(readFileSync(path.join(ROOT, 'examples/firehose-request.json'), 'utf8'));
    expect(JSON.parse(gunzipSync(Buffer.from(firehose.records[0].data, 'base64')).toString())).toEqual(sub);
  });

  // One organization per document, so each document's examples run in their order on a fresh record.
  for (const file of files) {
    const blocks = docBlocks(file);
    if (blocks.length === 0) continue;
    it(`${path.relative(ROOT, file)}: ${blocks.length} blocks run as written and print what they promise`, async () => {
      const org = await createOrg(app.url);
      for (const block of blocks) {
        const dir = mkdtempSync(path.join(tmpdir(), 'doc-block-'));
        try {
          symlinkSync(path.join(ROOT, 'examples'), path.join(dir, 'examples'));
          writeFileSync(path.join(dir, 'block.sh'), script(block));
          const where = `${path.relative(ROOT, block.file)}:${block.line}`;
          const r = await bash(dir, { ...process.env, BASE: app.url, KEY: org.key, ADMIN_TOKEN, NODE_OPTIONS: '' });
          expect(r.status, `${where} exited ${r.status}:\n${r.stderr}\n--- script ---\n${script(block)}`).toBe(0);
          block.commands.forEach((c, n) => {
            if (c.expected === null || c.assigns) return;
            const out = readFileSync(path.join(dir, `out.${n}`), 'utf8').trim();
            const pattern = toPattern(c.expected);
            let actual: unknown = out;
            if (pattern !== undefined) {
              try {
                actual = JSON.parse(out);
              } catch {
                actual = out;
              }
            }
            const ok = pattern === undefined ? out === c.expected : matches(pattern, actual);
            expect(ok, `${where}: \`${c.text.split('\n')[0]}\`\n  promised ${c.expected}\n  printed  ${out}`).toBe(true);
          });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }, 300_000);
  }
});
