// The real entry point as a process: a bad setting stops it with the variable named; first start seeds a demo account
// (only once it listens); one process per DATA_DIR; SIGTERM lets in-flight requests finish and ends streams cleanly.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/private-redis.js';
import { watchOutput } from '../helpers/process-output.js';
import { bearer, http } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

interface Proc {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

function startServer(env: Record<string, string>): Proc {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchOutput(proc, 'server');
  return { proc, output: watched.output, exited: watched.exited.then((e) => e.code), waitFor: (re, t = START_TIMEOUT_MS) => watched.waitForOutput(re, t) };
}

/** Resolves with the exit code, or null when the process is still running after timeoutMs (then it is killed). */
async function exitCodeWithin(p: Proc, timeoutMs: number): Promise<number | null | 'running'> {
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([p.exited, new Promise<'running'>((res) => (timer = setTimeout(() => res('running'), timeoutMs)))]);
  clearTimeout(timer);
  if (r === 'running') p.proc.kill('SIGKILL');
  return r;
}

/**
 * How long a line may take to appear: only the failure path of a hung process. Generous, because a busy machine can take
 * long to compile the sources, start PGlite and migrate before the first line.
 */
const START_TIMEOUT_MS = 240_000;

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
      const key = (await s.waitFor(/API key:\s+(ask_\S+)/))[1];
      await s.waitFor(/audit-stream listening/);
      const base = `http://127.0.0.1:${port}`;
      const pw = (await s.waitFor(/password:\s+(\S+)/))[1];
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
      await s.waitFor(/"url":"\/api\/v1\/ingest\/events"/);
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
  }, 2 * START_TIMEOUT_MS);

  it('one process per DATA_DIR: a second exits at once (code 75, naming the directory); the first keeps every event; a killed holder does not block a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'as-lock-'));
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const first = startServer({ DATA_DIR: dataDir, PORT: String(p1), HOST: '127.0.0.1' });
    let third: Proc | undefined;
    try {
      const key = (await first.waitFor(/API key:\s+(ask_\S+)/))[1];
      const base1 = `http://127.0.0.1:${p1}`;
      expect((await http(`${base1}/api/v1/ingest/events`, { method: 'POST', headers: bearer(key), json: { id: 'before', serverId: 's', toolName: 't' } })).body).toEqual({ accepted: 1, duplicates: 0 });

      const second = startServer({ DATA_DIR: dataDir, PORT: String(p2), HOST: '127.0.0.1' });
      const code = await exitCodeWithin(second, 30_000);
      expect(code, second.output()).toBe(75);
      expect(second.output()).toContain(dataDir);
      expect(second.output()).toMatch(/in use by another audit-stream process \(pid \d+\)/);
      expect(second.output()).toMatch(/stop the other process first, or start this one with another DATA_DIR/);
      expect(second.output()).not.toContain('audit-stream listening');

      // The first is untouched and keeps acknowledging.
      expect((await http(`${base1}/api/v1/ingest/events`, { method: 'POST', headers: bearer(key), json: { id: 'after', serverId: 's', toolName: 't' } })).body).toEqual({ accepted: 1, duplicates: 0 });
      first.proc.kill('SIGKILL');
      await first.exited;

      // The holder died without cleaning up: its lock holds nothing, the next start proceeds and has both events.
      third = startServer({ DATA_DIR: dataDir, PORT: String(p3), HOST: '127.0.0.1' });
      await third.waitFor(/audit-stream listening/);
      const list = await http(`http://127.0.0.1:${p3}/api/v1/audit-events?limit=10`, { headers: bearer(key) });
      expect(list.status).toBe(200);
      expect(list.body.items.map((e: { metadata: { id?: string } }) => e.metadata.id).filter(Boolean).sort()).toEqual(['after', 'before']);
      third.proc.kill('SIGTERM');
      expect(await third.exited).toBe(0);
    } finally {
      first.proc.kill('SIGKILL');
      third?.proc.kill('SIGKILL');
    }
  }, 2 * START_TIMEOUT_MS);

  it('the demo login is never lost: a first start that cannot listen creates nothing, the next start creates and prints it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'as-seed-'));
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const busyPort = (taken.address() as AddressInfo).port;
    try {
      const failed = startServer({ DATA_DIR: dataDir, PORT: String(busyPort), HOST: '127.0.0.1' });
      const code = await exitCodeWithin(failed, 60_000);
      expect(code).not.toBe(0);
      expect(failed.output()).toMatch(/EADDRINUSE/);
      expect(failed.output()).not.toMatch(/password:/);
    } finally {
      taken.close();
    }
    const port = await freePort();
    const s = startServer({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    try {
      const pw = (await s.waitFor(/password:\s+(\S+)/))[1];
      expect((await http(`http://127.0.0.1:${port}/api/v1/auth/login`, { method: 'POST', json: { email: 'admin@demo.local', password: pw } })).status).toBe(200);
    } finally {
      s.proc.kill('SIGKILL');
    }
  }, 2 * START_TIMEOUT_MS);
});
