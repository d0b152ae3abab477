// The worker end of the runner's IPC: read the JSON config, post messages, wait for commands, exit when told.
import type { WorkerMessage } from './workers.js';

export function workerConfig<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

export function post(message: WorkerMessage): void {
  process.send?.(message);
}

const inbox: WorkerMessage[] = [];
const waiting: { type: string; resolve: (m: WorkerMessage) => void }[] = [];

process.on('message', (m: WorkerMessage) => {
  if (m.type === 'exit') process.exit(0);
  const i = waiting.findIndex((w) => w.type === m.type);
  if (i >= 0) waiting.splice(i, 1)[0].resolve(m);
  else inbox.push(m);
});
// The runner going away ends the worker: load generators never outlive a bench run.
process.on('disconnect', () => process.exit(0));

/** The next command of this type from the runner. */
export function command<T extends WorkerMessage = WorkerMessage>(type: string): Promise<T> {
  const i = inbox.findIndex((m) => m.type === type);
  if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0] as T);
  return new Promise((resolve) => waiting.push({ type, resolve: (m) => resolve(m as T) }));
}

/** Runs a worker's main function, reporting a failure to the runner before exiting. */
export function runWorker(main: () => Promise<void>): void {
  main().catch((err: Error) => {
    post({ type: 'error', message: err.stack ?? err.message });
    console.error(err);
    process.exit(1);
  });
}
