// Load generators as separate Node processes (forked with the tsx loader) that talk to the runner over IPC.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface WorkerMessage {
  type: string;
  [key: string]: unknown;
}

export interface Worker {
  readonly child: ChildProcess;
  send(message: WorkerMessage): void;
  /** The next message of this type (messages are buffered until asked for); rejects if the worker exits first or after timeoutMs. */
  next<T extends WorkerMessage = WorkerMessage>(type: string, timeoutMs?: number): Promise<T>;
  /** Asks the worker to exit and waits for it (kills it after a grace period). */
  stop(): Promise<void>;
}

/** Starts bench/<script> in its own process with `config` as its JSON argument. */
export function startWorker(script: string, config: unknown, opts: { maxOldSpaceMb?: number } = {}): Worker {
  const execArgv = ['--import', 'tsx', ...(opts.maxOldSpaceMb ? [`--max-old-space-size=${opts.maxOldSpaceMb}`] : [])];
  const child = fork(path.join(benchDir, script), [JSON.stringify(config)], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: WorkerMessage[] = [];
  const waiting: { type: string; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }[] = [];
  let exited: string | null = null;

  child.on('message', (m: WorkerMessage) => {
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0].resolve(m);
    else inbox.push(m);
  });
  child.on('exit', (code, signal) => {
    exited = `${script} exited (${signal ?? code})`;
    for (const w of waiting.splice(0)) w.reject(new Error(exited));
  });

  return {
    child,
    send(message) {
      if (child.connected) child.send(message);
    },
    next<T extends WorkerMessage>(type: string, timeoutMs = 120_000): Promise<T> {
      const i = inbox.findIndex((m) => m.type === type);
      if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0] as T);
      if (exited) return Promise.reject(new Error(exited));
      return new Promise<T>((resolve, reject) => {
        const entry = {
          type,
          resolve: (m: WorkerMessage) => {
            clearTimeout(timer);
            resolve(m as T);
          },
          reject: (e: Error) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(entry), 1);
          reject(new Error(`${script}: no "${type}" message within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.push(entry);
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      this.send({ type: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    },
  };
}
