// Shared metadata stored once per organization (audit_contexts, migrations 010 and 012): an event's metadata split into
// the part its log batch shares and its own part, and the digest that finds a shared part again.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { hasOwn, ownValue, setOwn } from '../../shared/own-keys.js';

type Json = Record<string, unknown>;

/** A batch's shared metadata and its digest: the first 16 bytes of the SHA-256 of its RFC 8785 text. */
export interface SharedContext {
  context: Json;
  digest: Buffer;
  /** The digest as hex: the key that names the context in a write. */
  key: string;
}

/** The SharedContext of `shared`, made once per batch object (`seen` remembers the batch's). */
export function sharedContextOf(shared: Json, seen: Map<Json, SharedContext>): SharedContext {
  let c = seen.get(shared);
  if (!c) {
    const digest = createHash('sha256').update(canonicalize(shared)!).digest().subarray(0, 16);
    c = { context: shared, digest, key: digest.toString('hex') };
    seen.set(shared, c);
  }
  return c;
}

function isPlainObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/**
 * What the event keeps of `metadata` when `shared` is stored apart, by one rule for every source: every key not
 * shared, and of a key whose shared value is an object, the object's keys not shared (the key left out when none is),
 * e.g. a log event's own id beside its batch's log group. Reading puts them back together (audit_event_metadata,
 * migration 046): `(shared || own)`, each key whose shared and own values are both objects merged one level down. Null
 * when that would not give back `metadata` exactly (a shared key missing or holding another value), or when nothing is
 * shared: the event then keeps its whole metadata. Values are compared by identity, as the batch hands the same values
 * to all its entries.
 */
export function ownMetadata(metadata: Json, shared: Json): Json | null {
  let sharesAny = false;
  for (const k of Object.keys(shared)) {
    const s = shared[k];
    if (s === undefined) continue;
    if (!hasOwn(metadata, k)) return null;
    const m = metadata[k];
    if (isPlainObject(s)) {
      if (!isPlainObject(m)) return null;
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
    const s = ownValue(shared, k);
    if (isPlainObject(s)) {
      const rest: Json = {};
      let any = false;
      for (const ck of Object.keys(v as Json)) {
        const cv = (v as Json)[ck];
        if (cv === undefined || ownValue(s, ck) !== undefined) continue;
        setOwn(rest, ck, cv);
        any = true;
      }
      if (any) setOwn(own, k, rest);
    } else if (s === undefined) {
      setOwn(own, k, v);
    }
  }
  return own;
}
