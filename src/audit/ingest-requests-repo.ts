// SQL for ingest requests sent with an Idempotency-Key: their outcome, so a retry with the same key answers the same counts.
import type { Queryable } from '../db/db.js';
import { Unprocessable } from '../shared/domain-errors.js';

/** What a request claims with its Idempotency-Key: the key and a digest of the request it was first sent with. */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
}

export interface IngestOutcome {
  accepted: number;
  duplicates: number;
}

/** The same Idempotency-Key sent with a different request: a retry cannot help, so 422 (IETF idempotency-key draft). */
export class IdempotencyKeyReusedError extends Unprocessable {
  constructor() {
    super('this Idempotency-Key was already used for a different request; use a new key for each request (and the same key only to retry it)', 'idempotency_key_reused');
  }
}

/**
 * The outcome stored for the claim's key in the org, or null when the key is new. Throws 422 when the key was used
 * with a different request. Must run while the org's seq lock is held, so two requests with one key are serialized.
 */
export async function priorOutcome(tx: Queryable, orgId: string, claim: IdempotencyClaim): Promise<IngestOutcome | null> {
  const r = await tx.query<{ fingerprint: string; accepted: number; duplicates: number }>(
    'SELECT fingerprint, accepted, duplicates FROM ingest_requests WHERE org_id = $1 AND idempotency_key = $2',
    [orgId, claim.key],
  );
  if (r.rows.length === 0) return null;
  if (r.rows[0].fingerprint !== claim.fingerprint) throw new IdempotencyKeyReusedError();
  return { accepted: Number(r.rows[0].accepted), duplicates: Number(r.rows[0].duplicates) };
}

/** Records the outcome of the claim's request, in the transaction that stored its events. */
export async function saveOutcome(tx: Queryable, orgId: string, claim: IdempotencyClaim, outcome: IngestOutcome): Promise<void> {
  await tx.query('INSERT INTO ingest_requests (org_id, idempotency_key, fingerprint, accepted, duplicates) VALUES ($1, $2, $3, $4, $5)', [
    orgId,
    claim.key,
    claim.fingerprint,
    outcome.accepted,
    outcome.duplicates,
  ]);
}
