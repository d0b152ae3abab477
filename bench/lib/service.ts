// Starts the service (and the bare baseline server) as separate processes with a raised fd limit, and measures them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, existsSync, readFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from './clock.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TMP = path.join(ROOT, 'bench', '.tmp');

export interface ServerEntry {
  /** How the service runs: compiled (dist) or from source through tsx when the build failed. */
  mode: 'dist' | 'source';
  args: string[];
}

/**
 * Builds the service once (`npm run build`, else tsc alone); falls back to running from source. BENCH_SERVER_DIR runs
 * instead the service built in another checkout (its `dist/`, built there beforehand), so two commits can be measured
 * one after the other on the same machine by the same scenarios.
 */
export function prepareServer(log: (line: string) => void): ServerEntry {
  const other = process.env.BENCH_SERVER_DIR;
  if (other) {
    const server = path.resolve(other, 'dist/src/server.js');
    if (!existsSync(server)) throw new Error(`BENCH_SERVER_DIR: ${server} does not exist (run npm run build in that checkout)`);
    log(`service: ${server} (BENCH_SERVER_DIR)`);
    return { mode: 'dist', args: [server] };
  }
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status === 0) return { mode: 'dist', args: ['dist/src/server.js'] };
  log(`npm run build failed (${build.status}); trying tsc alone\n${(build.stdout + build.stderr).slice(-2000)}`);
  const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  if (tsc.status === 0) return { mode: 'dist', args: ['dist/src/server.js'] };
  log('tsc failed as well; running the service from source (tsx)');
  return { mode: 'source', args: ['--import', 'tsx', 'src/server.ts'] };
}

/** The open-files limit a spawned server gets (the hard limit; raising it further needs privileges). */
export function fdLimit(): number {
  const r = spawnSync('bash', ['-c', 'ulimit -n $(ulimit -Hn) 2>/dev/null; ulimit -n'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process in KiB (VmRSS), or NaN once it is gone. */
export function rssKb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

export interface RunningServer {
  name: string;
  url: string;
  pid: number;
  rssKb(): number;
  stop(): Promise<void>;
}

/** Spawns `node <args>` under `ulimit -n <hard limit>`, logs to bench/.tmp/logs/<name>.log, and waits for /healthz. */
export async function startServer(name: string, args: string[], env: Record<string, string>): Promise<RunningServer> {
  const port = await freePort();
  // BENCH_CPU_PROF=1 writes a V8 CPU profile of every server process to bench/.tmp/prof (open it in Chrome DevTools).
  // BENCH_NODE_ARGS: extra Node flags for the server processes only (e.g. to try V8 heap settings).
  if (process.env.BENCH_NODE_ARGS) args = [...process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean), ...args];
  if (process.env.BENCH_CPU_PROF) args = ['--cpu-prof', `--cpu-prof-dir=${path.join(TMP, 'prof')}`, `--cpu-prof-name=${name}.cpuprofile`, ...args];
  mkdirSync(path.join(TMP, 'logs'), { recursive: true });
  const logFd = openSync(path.join(TMP, 'logs', `${name}.log`), 'w');
  const child: ChildProcess = spawn('bash', ['-c', 'ulimit -n $(ulimit -Hn) 2>/dev/null; exec "$0" "$@"', process.execPath, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} during start; see bench/.tmp/logs/${name}.log`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not become healthy in 60 s`);
    }
    await sleep(100);
  }
  const pid = child.pid!;
  return {
    name,
    url,
    pid,
    rssKb: () => rssKb(pid),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
