// An event's metadata as the store gives it back: the row's own part over its shared context, each key whose shared and
// own values are both objects merged one level down (audit_event_metadata, migration 046), in TypeScript.

type Json = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `(context || own)`, with `context[k] || own[k]` for each k where both are objects; `own` alone without a context. */
export function storedMetadata(own: Json, context: Json | null): Json {
  if (!context) return own;
  const out: Json = { ...context, ...own };
  for (const k of Object.keys(context)) {
    const c = context[k];
    const o = Object.prototype.hasOwnProperty.call(own, k) ? own[k] : undefined;
    if (isPlainObject(c) && isPlainObject(o)) Object.defineProperty(out, k, { value: { ...c, ...o }, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
