// The real entry point as a process: a bad setting stops it with the variable named; first start seeds a demo account;
// SIGTERM lets in-flight requests finish and ends streams cleanly.
import { spawnSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reap, spawnServer } from '../reliability/processes.js';
import { bearer, http } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

describe('server process', () => {
  it('refuses to start with a bad setting and names it', () => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, PORT: 'not-a-port' }, encoding: 'utf8' });
    expect(res.status).toBe(78);
    expect(res.stderr).toContain('PORT');
  });

  // Waits on the process's output (each chunk is checked as it arrives); the timeouts are only the failure path of a
  // hung process and are generous, because a busy machine can take long to compile, start PGlite and migrate.
  it('seeds a demo account on first start, serves it, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'as-server-'));
    const s = await spawnServer({ name: 'server', env: { DATA_DIR: dataDir, SEED_DEMO: 'true', SSE_HEARTBEAT_MS: '100' }, startTimeoutMs: 240_000 });
    try {
      const key = (await s.waitForOutput(/API key:\s+(ask_\S+)/, 60_000))[1];
      const pw = (await s.waitForOutput(/password:\s+(\S+)/, 60_000))[1];
      const base = s.url;
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
      await s.waitForOutput(/"url":"\/api\/v1\/ingest\/events"/, 60_000);
      s.kill('SIGTERM');
      const r = await inflight;
      expect(r.status).toBe(200);
      await stream.ended;
      expect((await s.exited).code).toBe(0);
      expect(s.output()).toContain('shut down cleanly');
      expect(r.body.accepted).toBe(3000);
    } finally {
      await reap(s);
    }
  }, 420_000);
});
