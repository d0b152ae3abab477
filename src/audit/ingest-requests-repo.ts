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

/** A stored outcome with the fingerprint of the request it was first sent with. */
export interface StoredOutcome extends IngestOutcome {
  fingerprint: string;
}

/**
 * The stored outcomes of several keys of the org at once (a group of requests), by key; absent keys are new. Must run
 * while the org's seq lock is held. The caller compares fingerprints: the same key with another fingerprint is a 422.
 */
export async function priorOutcomes(tx: Queryable, orgId: string, keys: readonly string[]): Promise<Map<string, StoredOutcome>> {
  const out = new Map<string, StoredOutcome>();
  if (keys.length === 0) return out;
  const r = await tx.query<{ idempotency_key: string; fingerprint: string; accepted: number; duplicates: number }>(
    'SELECT idempotency_key, fingerprint, accepted, duplicates FROM ingest_requests WHERE org_id = $1 AND idempotency_key = ANY($2::text[])',
    [orgId, keys],
  );
  for (const row of r.rows) out.set(row.idempotency_key, { fingerprint: row.fingerprint, accepted: Number(row.accepted), duplicates: Number(row.duplicates) });
  return out;
}

/** Records the outcomes of several requests (distinct keys) in one statement, in the transaction that stored their events. */
export async function saveOutcomes(tx: Queryable, orgId: string, outcomes: readonly (IngestOutcome & IdempotencyClaim)[]): Promise<void> {
  if (outcomes.length === 0) return;
  if (outcomes.length === 1) return saveOutcome(tx, orgId, outcomes[0], outcomes[0]);
  await tx.query(
    `INSERT INTO ingest_requests (org_id, idempotency_key, fingerprint, accepted, duplicates)
     SELECT $1, k, f, a, d FROM unnest($2::text[], $3::text[], $4::int[], $5::int[]) AS o(k, f, a, d)`,
    [orgId, outcomes.map((o) => o.key), outcomes.map((o) => o.fingerprint), outcomes.map((o) => o.accepted), outcomes.map((o) => o.duplicates)],
  );
}

/**
 * Removes up to `limit` of the org's outcomes recorded before `before` and returns how many (the retention pass: a
 * key's record lives as long as the events it stored).
 */
export async function deleteOutcomesBefore(db: Queryable, orgId: string, before: Date, limit: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM ingest_requests WHERE org_id = $1 AND idempotency_key IN (
       SELECT idempotency_key FROM ingest_requests WHERE org_id = $1 AND created_at < $2 LIMIT $3)`,
    [orgId, before.toISOString(), limit],
  );
  return r.rowCount ?? 0;
}
