// Own properties of plain-data objects from input: read without inherited ones, set without touching the prototype.

/** True when `obj` has `key` as its own property. */
export function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** The own property `key` of `obj`, never an inherited one (so `constructor` or `__proto__` can't leak in). */
export function ownValue(obj: Record<string, unknown>, key: string): unknown {
  return hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * Sets `key` as own data, `__proto__` included (an assignment would change the object's prototype instead). Other keys
 * are assigned, which keeps the object in V8's fast shape (defining every key would not).
 */
export function setOwn<O extends Record<string, unknown>>(obj: O, key: string, value: O[string]): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else (obj as Record<string, unknown>)[key] = value;
}
