// The leaf hashing thread: for each appended row, its record rebuilt from the row's texts (the stored metadata over its
// shared context), written per RFC 8785 and hashed as an RFC 9162 leaf. Answers one Buffer of 32-byte hashes per job.
import { hash } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { canonicalJson } from '../audit/event-log/canonical-json.js';
import { storedMetadata } from './stored-metadata.js';
import type { LeafJob, LeafAnswer } from './leaf-hashing.js';

const port = parentPort!;

port.on('message', (job: LeafJob) => {
  try {
    const contexts = new Map<number, Record<string, unknown>>();
    for (const [id, text] of job.contexts) contexts.set(id, JSON.parse(text) as Record<string, unknown>);
    // Its own memory (not the shared pool of small Buffers), so it can be transferred.
    const out = Buffer.from(new ArrayBuffer(job.heads.length * 32));
    for (let i = 0; i < job.heads.length; i++) {
      const record = JSON.parse(job.heads[i]) as Record<string, unknown>;
      const own = JSON.parse(job.metadata[i]) as Record<string, unknown>;
      const contextId = job.contextIds[i];
      record.metadata = storedMetadata(own, contextId === null ? null : (contexts.get(contextId) ?? null));
      hash('sha256', `\u0000${canonicalJson(record)}`, 'buffer').copy(out, i * 32);
    }
    const answer: LeafAnswer = { id: job.id, leaves: out };
    port.postMessage(answer, [out.buffer as ArrayBuffer]);
  } catch (err) {
    const answer: LeafAnswer = { id: job.id, error: (err as Error).message };
    port.postMessage(answer);
  }
});
