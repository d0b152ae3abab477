// Splits an event's metadata into the part its log batch shares (stored once per organization) and its own part.
import { hasOwn, ownValue, setOwn } from '../shared/own-keys.js';

/** The metadata key whose object is shared key by key (the entry's own keys, such as eventId, stay with the event). */
export const NESTED_SHARED_KEY = 'cloudwatch';

type Json = Record<string, unknown>;

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * What the event keeps of `metadata` when `shared` is stored apart: every key not shared, and of metadata.cloudwatch
 * the keys not shared (left out when none is). Reading puts them back together (audit_event_metadata, migration 010):
 * `(shared - 'cloudwatch') || own || {cloudwatch: shared.cloudwatch || own.cloudwatch}`. Null when that would not give
 * back `metadata` exactly (a shared key missing or holding another value), or when nothing is shared: the event then
 * keeps its whole metadata. Values are compared by identity, as the batch hands the same values to all its entries.
 */
export function ownMetadata(metadata: Json, shared: Json): Json | null {
  let sharesAny = false;
  for (const k of Object.keys(shared)) {
    const s = shared[k];
    if (s === undefined) continue;
    if (!hasOwn(metadata, k)) return null;
    const m = metadata[k];
    if (k === NESTED_SHARED_KEY) {
      if (!isPlainObject(s) || !isPlainObject(m)) return null;
      for (const sk of Object.keys(s)) {
        if (s[sk] === undefined) continue;
        if (!hasOwn(m, sk) || m[sk] !== s[sk]) return null;
      }
    } else if (m !== s) {
      return null;
    }
    sharesAny = true;
  }
  if (!sharesAny) return null;
  const own: Json = {};
  for (const k of Object.keys(metadata)) {
    const v = metadata[k];
    if (v === undefined) continue;
    if (k === NESTED_SHARED_KEY && ownValue(shared, k) !== undefined) {
      const s = shared[k] as Json;
      const rest: Json = {};
      let any = false;
      for (const ck of Object.keys(v as Json)) {
        const cv = (v as Json)[ck];
        if (cv === undefined || ownValue(s, ck) !== undefined) continue;
        setOwn(rest, ck, cv);
        any = true;
      }
      if (any) setOwn(own, k, rest);
    } else if (ownValue(shared, k) === undefined) {
      setOwn(own, k, v);
    }
  }
  return own;
}

/** A context of a write: its position in the statement's list and the largest seq stored with it. */
interface ContextEntry {
  i: number;
  context: Json;
  last_seq: number;
}

/**
 * The distinct shared metadata of one write, each with the largest seq stored with it (retention keeps a context
 * until every event up to that seq is gone). The same object (a batch's) or the same JSON (batches of one log stream)
 * is one entry; Postgres merges entries of the same jsonb again by digest.
 */
export class WriteContexts {
  private readonly byObject = new Map<Json, ContextEntry>();
  private readonly byJson = new Map<string, ContextEntry>();
  readonly entries: ContextEntry[] = [];

  /** The position of `shared` in the list, recording that the event `seq` uses it. */
  use(shared: Json, seq: number): number {
    let e = this.byObject.get(shared);
    if (!e) {
      const json = JSON.stringify(shared);
      e = this.byJson.get(json);
      if (!e) {
        e = { i: this.entries.length, context: shared, last_seq: seq };
        this.entries.push(e);
        this.byJson.set(json, e);
      }
      this.byObject.set(shared, e);
    }
    if (seq > e.last_seq) e.last_seq = seq;
    return e.i;
  }
}
