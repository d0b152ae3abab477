// Leaf hashes of appended rows, computed on a thread of their own (the service's main thread keeps decoding and
// answering): each row's record is rebuilt from the texts written to the store, so a leaf is what a reader of the
// stored event recomputes. One thread per service, started on first use and again after it fails.
import { Worker } from 'node:worker_threads';
import type { EventRow } from '../audit/event-log/row-sink.js';

/** One append's rows, as the thread reads them. */
export interface LeafJob {
  id: number;
  /** JSON of each row's record without its metadata. */
  heads: string[];
  /** JSON of the metadata each row stores (its own part when it has a shared context). */
  metadata: string[];
  contextIds: (number | null)[];
  /** The shared contexts the rows name: [id, JSON]. */
  contexts: [number, string][];
}

export type LeafAnswer = { id: number; leaves: Uint8Array } | { id: number; error: string };

export interface LeafHasher {
  /** The leaf hash of each row, in order: SHA-256(0x00 || RFC 8785 text of its stored record). */
  leaves(rows: readonly EventRow[], contexts: ReadonlyMap<number, Record<string, unknown>>): Promise<Buffer[]>;
  close(): Promise<void>;
}

export class LeafHashingFailed extends Error {}

/** The job of `rows`: each record's fields but its metadata, and the texts the rows store. */
export function leafJob(id: number, rows: readonly EventRow[], contexts: ReadonlyMap<number, Record<string, unknown>>): LeafJob {
  const named = new Set<number>();
  const job: LeafJob = { id, heads: [], metadata: [], contextIds: [], contexts: [] };
  for (const row of rows) {
    const r = row.record;
    job.heads.push(JSON.stringify({ seq: r.seq, type: r.type, source: r.source, occurredAt: r.occurredAt, receivedAt: r.receivedAt, serverId: r.serverId, sessionId: r.sessionId, toolName: r.toolName, action: r.action, latencyMs: r.latencyMs }));
    job.metadata.push(row.metadata);
    job.contextIds.push(row.contextId);
    if (row.contextId !== null && !named.has(row.contextId)) {
      named.add(row.contextId);
      const context = contexts.get(row.contextId);
      if (!context) throw new LeafHashingFailed(`row of seq ${r.seq} names shared context ${row.contextId}, which the append does not hold`);
      job.contexts.push([row.contextId, JSON.stringify(context)]);
    }
  }
  return job;
}

/** The worker's module beside this one: compiled JavaScript, or TypeScript run through tsx (tests and `npm run demo`). */
function startWorker(): Worker {
  const source = import.meta.url.endsWith('.ts');
  const url = new URL(`./leaf-hashing-worker.${source ? 'ts' : 'js'}`, import.meta.url);
  if (!source) return new Worker(url);
  // From source: the thread registers tsx's loader, then loads the module.
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true });
}

export function createLeafHasher(): LeafHasher {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve: (leaves: Buffer[]) => void; reject: (err: Error) => void; count: number }>();

  function failAll(err: Error): void {
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  }

  function ready(): Worker {
    if (worker) return worker;
    const w = startWorker();
    w.unref();
    w.on('message', (a: LeafAnswer) => {
      const p = pending.get(a.id);
      if (!p) return;
      pending.delete(a.id);
      if ('error' in a) return p.reject(new LeafHashingFailed(`leaf hashing failed: ${a.error}`));
      const all = Buffer.from(a.leaves.buffer, a.leaves.byteOffset, a.leaves.byteLength);
      p.resolve(Array.from({ length: p.count }, (_, i) => all.subarray(i * 32, (i + 1) * 32)));
    });
    const gone = (err: Error) => {
      if (worker === w) worker = null;
      failAll(new LeafHashingFailed(`the leaf hashing thread stopped: ${err.message}`));
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`exit code ${code}`)));
    worker = w;
    return w;
  }

  return {
    leaves(rows, contexts) {
      if (rows.length === 0) return Promise.resolve([]);
      const job = leafJob(nextId++, rows, contexts);
      return new Promise((resolve, reject) => {
        const w = ready();
        pending.set(job.id, { resolve, reject, count: rows.length });
        // While a job is out, the thread keeps the process alive; idle, it does not.
        w.ref();
        w.postMessage(job);
      }).finally(() => {
        if (pending.size === 0) worker?.unref();
      }) as Promise<Buffer[]>;
    },
    async close() {
      const w = worker;
      worker = null;
      failAll(new LeafHashingFailed('the service is stopping'));
      if (w) await w.terminate();
    },
  };
}
