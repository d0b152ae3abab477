// One append of an organization, inside its transaction: the only place seqs are assigned. Each request's events are
// prepared before the seq lock (storable, deduplicated within the request, digests); under the lock they are checked
// against the store, given the session rules, seqs and canonical records, and written by the row sink.
import { createHash, hash } from 'node:crypto';
import type { Transaction } from '../../db/db.js';
import { applySessionRules, sessionsOf, type SessionStatus, type SessionUpsert } from '../../sessions/session-rules.js';
import { InvalidInput } from '../../shared/domain-errors.js';
import { storable } from '../../shared/input-safety.js';
import type { JobOutcome } from '../../shared/keyed-batcher.js';
import { isIdentityKey, type NewAuditEvent, type PublishedBatch, type StreamEvent } from '../audit-types.js';
import { IdempotencyKeyReusedError, priorOutcomes, saveOutcomes, type IdempotencyClaim, type IngestOutcome, type StoredOutcome } from '../ingest-requests-repo.js';
import { recordOf, streamPayloadOf, type CanonicalRecord } from './canonical-record.js';
import { ownMetadata, sharedContextOf, type SharedContext } from './contexts.js';
import { lockOrgSeq, readStoredState, recordBookkeeping, type ContextUse } from './log-sql.js';
import type { EventRow, RowSink } from './row-sink.js';

const MAX_KEY_LENGTH = 200;
const INT4_MAX = 2 ** 31 - 1;

/**
 * A dedupe key as stored: as given when short, else as its SHA-256 (so digests of long keys stay what they were).
 * Postgres keeps the first 16 bytes of the SHA-256 of this form (dedupeDigest).
 */
export function storedDedupeKey(key: string): string {
  return key.length <= MAX_KEY_LENGTH ? key : `sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/** The stored dedupe digest of a stored-form key: the first 16 bytes of its SHA-256 (audit_dedupe_digest, migration 006). */
export function dedupeDigest(storedKey: string): Buffer {
  return hash('sha256', storedKey, 'buffer').subarray(0, 16);
}

/** True for the error of a row whose sender identity is stored already (the dedupe index's unique violation). */
export function isDuplicateIdentity(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && (e.constraint === undefined || e.constraint === 'audit_events_dedupe_idx');
}

/** What a caller appends: events and, for an ingest request, its Idempotency-Key claim. */
export interface AppendRequest {
  events: NewAuditEvent[];
  idempotency?: IdempotencyClaim;
}

interface PreparedEvent {
  event: NewAuditEvent;
  /** Index of the event in the request. */
  index: number;
  key: string;
  /** Hex of the dedupe digest, for identity keys only. */
  digest: string | null;
  /** The dedupe digest as stored (null for keys used once). */
  digestBytes: Buffer | null;
  shared: SharedContext | null;
  /** The metadata the row keeps when `shared` is stored apart (null: all of it). */
  own: Record<string, unknown> | null;
}

/** A request ready for its turn: everything that needs no database. */
export interface PreparedRequest {
  inputCount: number;
  idempotency?: IdempotencyClaim;
  fresh: PreparedEvent[];
  sessions: string[];
}

/** What one request appended. */
export interface Appended {
  /** The seq of each event of the request, in its order; null for a duplicate (or an Idempotency-Key replay). */
  seqs: (number | null)[];
  /** The records appended for it, in seq order (session_updates the session rules added included). */
  records: CanonicalRecord[];
  /** The events appended for it, as records[i] was made from stored[i]. */
  stored: NewAuditEvent[];
  accepted: number;
  duplicates: number;
  createdSessions: string[];
  /** True when an Idempotency-Key seen before answered with its first request's counts and nothing was stored. */
  replayed: boolean;
  /** Its streamed events, to publish (null when none was appended). */
  batch: PublishedBatch | null;
}

/** Times both sinks store alike and ISO 8601 writes in four-digit years: 0001-01-01 to 9999-12-31. */
const FIRST_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

function checkStorable(e: NewAuditEvent): void {
  const t = e.occurredAt.getTime();
  if (!(t >= FIRST_MS && t <= LAST_MS)) throw new InvalidInput('an event time must be a valid date between the years 1 and 9999');
  const l = e.latencyMs;
  if (l != null && !(Number.isInteger(l) && Math.abs(l) <= INT4_MAX)) throw new InvalidInput('latencyMs must be a whole number of milliseconds within 32 bits');
}

/**
 * The request made storable (see storable; throws TooDeep, InvalidInput), deduplicated within itself by dedupe key
 * (a repeated identity is a duplicate of its first entry), with digests and the shared part of log batches' metadata.
 */
export function prepareRequest(request: AppendRequest): PreparedRequest {
  const seen = new Set<string>();
  const contexts = new Map<Record<string, unknown>, SharedContext>();
  const fresh: PreparedEvent[] = [];
  request.events.forEach((raw, index) => {
    const key = storedDedupeKey(raw.dedupeKey);
    if (seen.has(key)) return;
    seen.add(key);
    checkStorable(raw);
    const event = storable(key === raw.dedupeKey ? raw : { ...raw, dedupeKey: key });
    const own = event.sharedMetadata && event.metadata ? ownMetadata(event.metadata, event.sharedMetadata) : null;
    const shared = own ? sharedContextOf(event.sharedMetadata!, contexts) : null;
    const digestBytes = isIdentityKey(key) ? dedupeDigest(key) : null;
    fresh.push({ event, index, key, digest: digestBytes && digestBytes.toString('hex'), digestBytes, shared, own });
  });
  return { inputCount: request.events.length, idempotency: request.idempotency, fresh, sessions: sessionsOf(fresh.map((p) => p.event)) };
}

/** Adds one request's session activity to the append's, as a second upsert of the same rows would have. */
function mergeUpserts(into: Map<string, SessionUpsert>, upserts: readonly SessionUpsert[]): void {
  for (const u of upserts) {
    const had = into.get(u.sessionId);
    if (!had) {
      into.set(u.sessionId, { ...u });
      continue;
    }
    had.count += u.count;
    if (u.firstSeenAt < had.firstSeenAt) had.firstSeenAt = u.firstSeenAt;
    if (u.lastSeenAt > had.lastSeenAt) had.lastSeenAt = u.lastSeenAt;
    had.serverId ??= u.serverId;
    had.createdAt ??= u.createdAt;
  }
}

/**
 * Appends `requests` (arrival order) for `orgId` in `tx`, whose org seq lock is held and whose last seq is `lastSeq`.
 * Each request is answered exactly as if they had run one after another: an identity stored earlier (in the store or by
 * an earlier request) is a duplicate; an Idempotency-Key seen before stores nothing and answers its first counts (422
 * for that request alone with another body); a session created by an earlier request exists for the later ones. Seqs
 * are consecutive across requests. The records get `receivedAt`. Throws (failing all) for errors of the statements.
 *
 * `assumeNew`: the stored identities are not looked up; every identity is taken as new and the dedupe index refuses a
 * stored one (a unique violation, isDuplicateIdentity), failing the transaction, which the caller then runs again
 * without it. Between requests of the append, identities are still checked in memory.
 */
export async function appendLocked(
  tx: Transaction,
  orgId: string,
  lastSeq: number,
  requests: readonly PreparedRequest[],
  sink: RowSink,
  receivedAt: Date,
  assumeNew = false,
): Promise<{ outcomes: JobOutcome<Appended>[]; batch: PublishedBatch | null }> {
  const claims = requests.flatMap((r) => (r.idempotency ? [r.idempotency.key] : []));
  const prior: Map<string, StoredOutcome> = claims.length ? await priorOutcomes(tx, orgId, claims) : new Map();
  const digests: string[] = [];
  const sessionIds = new Set<string>();
  const contextKeys = new Set<string>();
  for (const r of requests) {
    if (r.idempotency && prior.has(r.idempotency.key)) continue;
    for (const p of r.fresh) {
      if (p.digest && !assumeNew) digests.push(p.digest);
      if (p.shared) contextKeys.add(p.shared.key);
    }
    for (const s of r.sessions) sessionIds.add(s);
  }
  const state = await readStoredState(tx, orgId, digests, [...sessionIds], [...contextKeys]);

  const now = new Date();
  const receivedAtIso = receivedAt.toISOString();
  const receivedAtMs = receivedAt.getTime();
  const storedDigests = new Set<string>();
  const statuses = new Map<string, SessionStatus>(state.statuses);
  const upserts = new Map<string, SessionUpsert>();
  const contexts = new Map<string, ContextUse>();
  const servers = new Set<string>();
  const toSave: (IngestOutcome & IdempotencyClaim)[] = [];
  const rows: EventRow[] = [];
  const streamed: StreamEvent[] = [];
  const outcomes: JobOutcome<Appended>[] = [];
  let seq = lastSeq;

  for (const r of requests) {
    const claim = r.idempotency;
    const first = claim ? prior.get(claim.key) : undefined;
    const seqs: (number | null)[] = new Array(r.inputCount).fill(null);
    if (claim && first) {
      outcomes.push(
        first.fingerprint === claim.fingerprint
          ? { ok: true, value: { seqs, records: [], stored: [], accepted: first.accepted, duplicates: r.inputCount - first.accepted, createdSessions: [], replayed: true, batch: null } }
          : { ok: false, error: new IdempotencyKeyReusedError() },
      );
      continue;
    }
    const toStore = r.fresh.filter((p) => !p.digest || (!state.existing.has(p.digest) && !storedDigests.has(p.digest)));
    for (const p of toStore) if (p.digest) storedDigests.add(p.digest);
    const rules = applySessionRules(statuses, toStore.map((p) => p.event), now);
    for (const id of rules.created) statuses.set(id, 'active');
    mergeUpserts(upserts, rules.upserts);
    const duplicates = r.inputCount - toStore.length;
    if (claim) {
      // A later request of this append with the same key replays this one's counts, as it would after its commit.
      prior.set(claim.key, { fingerprint: claim.fingerprint, accepted: toStore.length, duplicates });
      toSave.push({ ...claim, accepted: toStore.length, duplicates });
    }
    const firstSeq = seq + 1;
    const records: CanonicalRecord[] = [];
    const ownStreamed: StreamEvent[] = [];
    rules.events.forEach((event, i) => {
      const origin = rules.origins[i];
      const p = origin >= 0 ? toStore[origin] : null;
      seq++;
      if (p) seqs[p.index] = seq;
      const record = recordOf(event, seq, receivedAtIso);
      records.push(record);
      // The prepared split holds for the prepared event itself; a copy (a suspended session's call) is split again.
      const own = p && p.event === event ? p.own : event.sharedMetadata ? ownMetadata(record.metadata, event.sharedMetadata) : null;
      let contextId: number | null = null;
      if (own && event.sharedMetadata) {
        const shared = p?.shared ?? sharedContextOf(event.sharedMetadata, new Map());
        let use = contexts.get(shared.key);
        if (!use) {
          use = { id: state.contexts.get(shared.key) ?? ++state.maxContextId, digest: shared.key, context: shared.context, lastSeq: seq };
          contexts.set(shared.key, use);
        }
        use.lastSeq = seq;
        contextId = use.id;
      }
      const payload = streamPayloadOf(record);
      if (payload) ownStreamed.push({ seq, type: payload.type, serverId: record.serverId, payload });
      if (record.serverId) servers.add(record.serverId);
      rows.push({
        record,
        occurredAtMs: event.occurredAt.getTime(),
        receivedAtMs,
        payload: payload && payload.type !== 'tool_call' ? JSON.stringify(payload) : null,
        metadata: JSON.stringify(contextId === null ? record.metadata : own),
        dedupeDigest: p?.digestBytes ? p.digestBytes : isIdentityKey(event.dedupeKey) ? dedupeDigest(storedDedupeKey(event.dedupeKey)) : null,
        contextId,
      });
    });
    streamed.push(...ownStreamed);
    const batch = records.length ? { orgId, firstSeq, lastSeq: seq, events: ownStreamed } : null;
    outcomes.push({ ok: true, value: { seqs, records, stored: rules.events, accepted: toStore.length, duplicates, createdSessions: rules.created, replayed: false, batch } });
  }

  if (rows.length) {
    await sink.write(tx, orgId, rows);
    await recordBookkeeping(tx, orgId, seq, [...servers].sort(), [...upserts.values()], [...contexts.values()]);
  }
  await saveOutcomes(tx, orgId, toSave);
  return { outcomes, batch: rows.length ? { orgId, firstSeq: lastSeq + 1, lastSeq: seq, events: streamed } : null };
}

/**
 * Appends one request in `tx`, taking the org's seq lock there, without the batcher and without publishing: for a
 * caller that owns the transaction (the published stream then learns of it by gap filling).
 */
export async function appendInTransaction(tx: Transaction, orgId: string, request: AppendRequest, sink: RowSink): Promise<Appended> {
  const out = await appendLocked(tx, orgId, await lockOrgSeq(tx, orgId), [prepareRequest(request)], sink, new Date());
  const o = out.outcomes[0];
  if (!o.ok) throw o.error;
  return o.value;
}
