// A private redis-server on a spare port, which a fault test may stop and restart without touching the shared one.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface PrivateRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** CLIENT KILL every connection with this name (e.g. the bus subscriber). */
  killClients(namePrefix: string): Promise<number>;
  /** Resolves once at least n connections with this name prefix are connected. */
  waitForClients(namePrefix: string, n: number, timeoutMs?: number): Promise<void>;
}

async function waitForPing(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      return;
    } catch {
      c.disconnect();
      if (Date.now() > deadline) throw new Error(`redis at ${url} did not start`);
      await new Promise((r) => setTimeout(r, 50)); // polling a process that has no readiness event of its own
    }
  }
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | null = null;
  const launch = async () => {
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPing(url);
  };
  await launch();
  return {
    url,
    port,
    async stop() {
      const p = proc;
      if (!p || p.exitCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
      proc = null;
    },
    start: launch,
    async waitForClients(namePrefix: string, n: number, timeoutMs = 10_000) {
      const c = new Redis(url);
      const deadline = Date.now() + timeoutMs;
      try {
        for (;;) {
          const list = (await c.client('LIST')) as string;
          const count = list.split('\n').filter((l) => (/\bname=(\S*)/.exec(l)?.[1] ?? '').startsWith(namePrefix)).length;
          if (count >= n) return;
          if (Date.now() > deadline) throw new Error(`only ${count} of ${n} ${namePrefix} clients connected`);
          await new Promise((r) => setTimeout(r, 50)); // Redis has no event for "a client connected"
        }
      } finally {
        c.disconnect();
      }
    },
    async killClients(namePrefix: string) {
      const c = new Redis(url);
      try {
        const list = (await c.client('LIST')) as string;
        let n = 0;
        for (const line of list.split('\n')) {
          const id = /\bid=(\d+)/.exec(line)?.[1];
          const name = /\bname=(\S*)/.exec(line)?.[1] ?? '';
          if (id && name.startsWith(namePrefix)) {
            await c.client('KILL', 'ID', id);
            n++;
          }
        }
        return n;
      } finally {
        c.disconnect();
      }
    },
  };
}
