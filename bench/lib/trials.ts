// Repeated measurements on a shared machine: run a scenario a few times and report the median trial, listing all of them.
export interface Trials<T> {
  /** The trial whose key is the median of all trials. */
  median: T;
  all: T[];
}

export async function runTrials<T>(n: number, run: (i: number) => Promise<T>, key: (t: T) => number): Promise<Trials<T>> {
  const all: T[] = [];
  for (let i = 0; i < n; i++) all.push(await run(i));
  const sorted = [...all].sort((a, b) => key(a) - key(b));
  return { median: sorted[Math.floor((sorted.length - 1) / 2)], all };
}
