// The service as real processes (node --import tsx src/server.ts): spawn, await log lines, signal, and keep every output byte.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { freePort } from '../helpers/private-redis.js';
import { watchOutput, type WatchedOutput } from '../helpers/process-output.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerProcess extends WatchedOutput {
  name: string;
  url: string;
  port: number;
  proc: ChildProcess;
  kill(signal: NodeJS.Signals): void;
}

export interface SpawnOptions {
  env: Record<string, string>;
  name: string;
  /** Extra node flags (e.g. --expose-gc). */
  nodeFlags?: string[];
  /** Test-only modules loaded (after tsx) before the entry point, relative to the repository root. */
  preload?: string[];
  port?: number;
  /** How long to wait for the "listening" line; a busy machine may take long to compile and migrate. */
  startTimeoutMs?: number;
}

export async function spawnServer(opts: SpawnOptions): Promise<ServerProcess> {
  const port = opts.port ?? (await freePort());
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    SEED_DEMO: 'false',
    ...opts.env,
  };
  delete env.NODE_OPTIONS;
  const preload = (opts.preload ?? []).flatMap((p) => ['--import', `./${p}`]);
  const proc = spawn(process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', ...preload, 'src/server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchOutput(proc, opts.name);
  const server: ServerProcess = {
    name: opts.name,
    url: `http://127.0.0.1:${port}`,
    port,
    proc,
    ...watched,
    kill(signal) {
      if (watched.isRunning()) proc.kill(signal);
    },
  };
  await server.waitForOutput(/audit-stream listening/, opts.startTimeoutMs ?? 60_000);
  return server;
}

/** A Redis key prefix of the test's own, so a shared Redis serves several test files without crosstalk. */
export function redisPrefix(what: string): string {
  return `as-rel-${what}-${randomBytes(4).toString('hex')}:`;
}

/** Stops a process for good (SIGKILL) if it still runs; for cleanup in afterAll. */
export async function reap(...servers: (ServerProcess | undefined)[]): Promise<void> {
  await Promise.all(
    servers.map(async (s) => {
      if (!s) return;
      s.kill('SIGKILL');
      await s.exited;
    }),
  );
}
