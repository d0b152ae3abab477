// Stores one or more write requests of an organization in one transaction (group commit), each answered as if it ran alone, in order.
import type { Queryable } from '../db/db.js';
import { applySessionRules, sessionsOf, type SessionStatus, type SessionUpsert } from '../sessions/session-rules.js';
import { storable } from '../shared/input-safety.js';
import { appendEvents, existingKeysAndSessions, lockOrgSeq, storedDedupeKey } from './audit-repo.js';
import { storableEventRow, type EventRow } from './append-rows.js';
import { isIdentityKey } from './audit-types.js';
import { IdempotencyKeyReusedError, priorOutcomes, saveOutcomes, type IdempotencyClaim, type IngestOutcome, type StoredOutcome } from './ingest-requests-repo.js';
import type { NewAuditEvent, PublishedBatch } from './audit-types.js';
import type { MemberOutcome } from './org-write-queue.js';

/** One request to store: its events and its Idempotency-Key claim, if any. */
export interface StoreRequest {
  events: NewAuditEvent[];
  idempotency?: IdempotencyClaim;
  /** prepareEvents(events), when the caller made it already (before waiting for its turn). */
  prepared?: PreparedEvents;
}

/**
 * A request's events made storable and deduplicated within the request, the sessions of its tool calls, and, when
 * made ahead, each event's row for the append statement (serialized before the turn, so that the org's seq lock is
 * not held meanwhile; rows not made ahead are made under the lock).
 */
export interface PreparedEvents {
  fresh: NewAuditEvent[];
  sessions: string[];
  rows: Map<NewAuditEvent, EventRow>;
}

/** What one request stored (`stored`: its events as appended, session_updates included) and its own publishable batch. */
export interface StoredRequest {
  stored: NewAuditEvent[];
  duplicates: number;
  batch: PublishedBatch | null;
  createdSessions: string[];
  replayed?: boolean;
}

/**
 * Everything a request needs that does not need the database: storable events, deduplicated within the request, and
 * (with `rowsAhead`) their rows. Throws (TooDeep, TooLarge) when an event cannot be stored.
 */
export function prepareEvents(input: NewAuditEvent[], rowsAhead = false): PreparedEvents {
  const seen = new Set<string>();
  const fresh: NewAuditEvent[] = [];
  const rows = new Map<NewAuditEvent, EventRow>();
  const storableShared = new Set<object>();
  for (const raw of input) {
    const key = storedDedupeKey(raw.dedupeKey);
    const keyed = key === raw.dedupeKey ? raw : { ...raw, dedupeKey: key };
    // With its row made here, the event is checked on the row's text (cheaper than walking it); else walked.
    const made = rowsAhead ? storableEventRow(keyed, storableShared) : { event: storable(keyed), row: null };
    const e = made.event;
    if (seen.has(e.dedupeKey)) continue;
    seen.add(e.dedupeKey);
    fresh.push(e);
    if (made.row) rows.set(e, made.row);
  }
  return { fresh, sessions: sessionsOf(fresh), rows };
}

/** Adds one request's session activity to the group's, as a second upsert of the same rows would have. */
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

/** The part of `batch` (seqs first..last) that belongs to one request. */
function sliceBatch(batch: PublishedBatch, firstSeq: number, lastSeq: number): PublishedBatch {
  return { orgId: batch.orgId, firstSeq, lastSeq, events: batch.events.filter((e) => e.seq >= firstSeq && e.seq <= lastSeq) };
}

/**
 * Stores `requests` (arrival order) for `orgId` inside `tx`, holding the org's seq lock once, and answers each with its
 * own outcome exactly as if they had run one after another: an event duplicating one of an earlier request of the group
 * is the later request's duplicate; an Idempotency-Key seen before (in the store or earlier in the group) stores nothing
 * and answers its first counts (422 for that request alone when it came with a different body); a session created by an
 * earlier request exists for the later ones; seqs are consecutive across the group, in request order. A request whose
 * own input cannot be stored fails alone. Throws (failing the whole group) for errors of the statements themselves.
 * Also returns the whole appended batch, to publish once.
 */
export async function storeRequests(tx: Queryable, orgId: string, requests: readonly StoreRequest[]): Promise<{ outcomes: MemberOutcome<StoredRequest>[]; batch: PublishedBatch | null }> {
  const outcomes: MemberOutcome<StoredRequest>[] = new Array(requests.length);
  // Everything that needs no database happens before the org's seq lock is taken.
  const prepared = requests.map((r, i) => {
    try {
      return r.prepared ?? prepareEvents(r.events);
    } catch (error) {
      outcomes[i] = { ok: false, error };
      return null;
    }
  });

  const lastSeq = await lockOrgSeq(tx, orgId);
  const claims = requests.flatMap((r, i) => (r.idempotency && prepared[i] ? [r.idempotency.key] : []));
  const prior: Map<string, StoredOutcome> = claims.length ? await priorOutcomes(tx, orgId, claims) : new Map();
  const keys: string[] = [];
  const sessionIds = new Set<string>();
  prepared.forEach((p, i) => {
    const claim = requests[i].idempotency;
    if (!p || (claim && prior.has(claim.key))) return;
    for (const e of p.fresh) if (isIdentityKey(e.dedupeKey)) keys.push(e.dedupeKey);
    for (const s of p.sessions) sessionIds.add(s);
  });
  const { existing, statuses } = await existingKeysAndSessions(tx, orgId, keys, [...sessionIds]);

  const now = new Date();
  const stored = new Set<string>();
  const statusesNow = new Map<string, SessionStatus>(statuses);
  const upserts = new Map<string, SessionUpsert>();
  const toSave: (IngestOutcome & IdempotencyClaim)[] = [];
  const appended: NewAuditEvent[] = [];
  // The rows made before the lock; a session_update made here, or a call of a suspended session (a copy with more
  // metadata), has none and gets its row in appendEvents.
  const appendedRows: (EventRow | undefined)[] = [];
  const ranges: { index: number; from: number; count: number }[] = [];

  for (let i = 0; i < requests.length; i++) {
    const p = prepared[i];
    if (!p) continue;
    const { events: input, idempotency: claim } = requests[i];
    if (claim) {
      const first = prior.get(claim.key);
      if (first) {
        outcomes[i] = first.fingerprint === claim.fingerprint
          ? { ok: true, value: { stored: [], duplicates: input.length - first.accepted, batch: null, createdSessions: [], replayed: true } }
          : { ok: false, error: new IdempotencyKeyReusedError() };
        continue;
      }
    }
    const toStore = p.fresh.filter((e) => !existing.has(e.dedupeKey) && !stored.has(e.dedupeKey));
    for (const e of toStore) stored.add(e.dedupeKey);
    const sessions = applySessionRules(statusesNow, toStore, now);
    for (const id of sessions.created) statusesNow.set(id, 'active');
    mergeUpserts(upserts, sessions.upserts);
    const duplicates = input.length - toStore.length;
    if (claim) {
      // A later request of the group with the same key replays this one's counts, as it would after its commit.
      prior.set(claim.key, { fingerprint: claim.fingerprint, accepted: toStore.length, duplicates });
      toSave.push({ ...claim, accepted: toStore.length, duplicates });
    }
    ranges.push({ index: i, from: appended.length, count: sessions.events.length });
    for (const e of sessions.events) {
      appended.push(e);
      appendedRows.push(p.rows.get(e));
    }
    outcomes[i] = { ok: true, value: { stored: sessions.events, duplicates, batch: null, createdSessions: sessions.created } };
  }

  const batch = await appendEvents(tx, orgId, lastSeq, appended, [...upserts.values()], appendedRows);
  await saveOutcomes(tx, orgId, toSave);
  if (batch) {
    for (const r of ranges) {
      if (r.count === 0) continue;
      const value = (outcomes[r.index] as { value: StoredRequest }).value;
      value.batch = ranges.length === 1 ? batch : sliceBatch(batch, lastSeq + r.from + 1, lastSeq + r.from + r.count);
    }
  }
  return { outcomes, batch };
}
