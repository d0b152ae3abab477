// The real entry point as a process: a bad setting stops it with the variable named; first start seeds a demo account;
// SIGTERM lets in-flight requests finish and ends streams cleanly.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/private-redis.js';
import { bearer, http } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

function startServer(env: Record<string, string>): { proc: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return { proc, output: () => out, exited };
}

async function waitForOutput(get: () => string, re: RegExp, exited: Promise<unknown>, timeoutMs = 30_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    const m = get().match(re);
    if (m) return m;
    if (done || Date.now() > deadline) throw new Error(`no ${re} in output:\n${get()}`);
    await new Promise((r) => setTimeout(r, 50)); // a child's stdout has no "line matched" event
  }
}

describe('server process', () => {
  it('refuses to start with a bad setting and names it', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, PORT: 'not-a-port' }, encoding: 'utf8' });
    expect(res.status).toBe(78);
    expect(res.stderr).toContain('PORT');
  });

  it('seeds a demo account on first start, serves it, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'as-server-'));
    const port = await freePort();
    const s = startServer({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', SSE_HEARTBEAT_MS: '100' });
    try {
      const key = (await waitForOutput(s.output, /API key:\s+(ask_\S+)/, s.exited))[1];
      await waitForOutput(s.output, /audit-stream listening/, s.exited);
      const base = `http://127.0.0.1:${port}`;
      const pw = (await waitForOutput(s.output, /password:\s+(\S+)/, s.exited))[1];
      expect((await http(`${base}/api/v1/auth/login`, { method: 'POST', json: { email: 'admin@demo.local', password: pw } })).status).toBe(200);
      // Secrets printed once to the operator never enter the structured log lines.
      for (const line of s.output().split('\n').filter((l) => l.startsWith('{'))) {
        expect(line).not.toContain(key);
        expect(line).not.toContain(pw);
      }
      const stream = await openSse(`${base}/api/v1/events`, bearer(key));
      expect(stream.status).toBe(200);
      // An ingest request in flight when SIGTERM arrives still completes.
      const big = Array.from({ length: 3000 }, (_, i) => ({ serverId: 's', toolName: `t${i % 7}` }));
      const inflight = http(`${base}/api/v1/ingest/events`, { method: 'POST', headers: bearer(key), json: big });
      await waitForOutput(s.output, /"url":"\/api\/v1\/ingest\/events"/, s.exited);
      s.proc.kill('SIGTERM');
      const r = await inflight;
      expect(r.status).toBe(200);
      await stream.ended;
      expect(await s.exited).toBe(0);
      expect(s.output()).toContain('shut down cleanly');
      expect(r.body.accepted).toBe(3000);
    } finally {
      s.proc.kill('SIGKILL');
    }
  });
});
