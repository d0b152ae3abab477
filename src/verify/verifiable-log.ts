// The verifiable log as one feature built from config: the append step, the signing key, the checkpointer and the API.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { createCheckpointer, type Checkpointer } from './checkpointer.js';
import { registerLogRoutes } from './log-routes.js';
import { createMerkleStep, type MerkleStep } from './merkle-append.js';
import { publishVerifierKey, type StoredCheckpoint, verifierKeys } from './merkle-sql.js';
import { parseVerifierKey } from './signed-note.js';
import { loadSigningKey } from './signing-key.js';

export interface VerifiableLog {
  /** The event log's step (null when MERKLE_LOG is off). */
  step: MerkleStep | null;
  /** Issues checkpoints (null when the log is off or no signing key is configured). */
  checkpointer: Checkpointer | null;
  /** The current verifier key, and whether its key was created by this start (printed beside the demo login). */
  verifierKey: string | null;
  keyCreated: boolean;
  register(app: FastifyInstance, deps: { auth: Authenticator; reads: OrgReadSlots }): void;
  /** Listeners of issued checkpoints (the stream). */
  onIssued(listener: (orgId: string, checkpoint: StoredCheckpoint) => void): void;
  start(): void;
  close(): Promise<void>;
}

export async function createVerifiableLog(deps: { config: Config; db: Db; logger: Logger; onRefused?: () => void }): Promise<VerifiableLog> {
  const { config, db, logger } = deps;
  const listeners: ((orgId: string, c: StoredCheckpoint) => void)[] = [];
  const key = config.MERKLE_LOG ? await loadSigningKey({ file: config.SIGNING_KEY_FILE, dataDir: config.DATA_DIR, embedded: db.kind === 'pglite', name: config.PUBLIC_HOST }) : null;
  if (key) await publishVerifierKey(db, key.signer.verifier.text);
  else if (config.MERKLE_LOG) logger.warn('no SIGNING_KEY_FILE: the verifiable log keeps its hashes but issues no checkpoints');
  const step = config.MERKLE_LOG ? createMerkleStep({ logger, catchupEvents: config.MERKLE_CATCHUP_EVENTS, catchupMaxBytes: config.READ_PAGE_MAX_BYTES }) : null;
  const checkpointer = key
    ? createCheckpointer({
        db,
        signer: key.signer,
        verifiers: async (q) => (await verifierKeys(q)).map((k) => parseVerifierKey(k.verifierKey)),
        publicHost: config.PUBLIC_HOST,
        everyEvents: config.CHECKPOINT_EVERY_EVENTS,
        intervalMs: config.CHECKPOINT_INTERVAL_MS,
        logger,
        onIssued: (orgId, c) => {
          for (const l of listeners) l(orgId, c);
        },
        onRefused: deps.onRefused,
      })
    : null;
  return {
    step,
    checkpointer,
    verifierKey: key?.signer.verifier.text ?? null,
    keyCreated: key?.created ?? false,
    register(app, r) {
      if (!config.MERKLE_LOG) return;
      registerLogRoutes(app, { db, auth: r.auth, reads: r.reads, publicHost: config.PUBLIC_HOST, currentKey: key?.signer.verifier.text ?? null });
    },
    onIssued: (l) => void listeners.push(l),
    start: () => checkpointer?.start(),
    close: async () => {
      await checkpointer?.stop();
    },
  };
}
