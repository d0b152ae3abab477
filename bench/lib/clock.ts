// Monotonic milliseconds that every process on this machine shares (CLOCK_MONOTONIC), for cross-process latencies.
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
