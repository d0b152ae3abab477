// Group commit without timers: items arriving while a flush runs wait and go together in the next one (at most
// maxBatch each), so one caller alone pays one round trip, and many at once share statements and commits.
export function createBatcher<T, R>(opts: { maxBatch: number; flush: (items: T[]) => Promise<R[]> }) {
  let queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    while (queue.length) {
      const batch = queue.slice(0, opts.maxBatch);
      queue = queue.slice(batch.length);
      try {
        const out = await opts.flush(batch.map((b) => b.item));
        batch.forEach((b, i) => b.resolve(out[i]));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    running = false;
  }

  return {
    add(item: T): Promise<R> {
      const p = new Promise<R>((resolve, reject) => queue.push({ item, resolve, reject }));
      if (!running) void drain();
      return p;
    },
  };
}
