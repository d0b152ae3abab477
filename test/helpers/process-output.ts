// A child process's output, kept whole, with waits that resolve on the chunk that matches (never on a clock).
import type { ChildProcess } from 'node:child_process';

export interface WatchedOutput {
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isRunning(): boolean;
  /** Resolves when the output matches (checked on every chunk); rejects on exit or after timeoutMs. */
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

export function watchOutput(proc: ChildProcess, name: string): WatchedOutput {
  let out = '';
  let running = true;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const onData = (c: Buffer) => {
    out += c.toString();
    wake();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => {
      running = false;
      wake();
      resolve({ code, signal });
    }),
  );
  return {
    output: () => out,
    exited,
    isRunning: () => running,
    waitForOutput(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            done();
            resolve(m);
          } else if (!running) {
            done();
            reject(new Error(`${name} exited before ${re}:\n${out.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${name}: no ${re} within ${timeoutMs} ms:\n${out.slice(-3000)}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}
