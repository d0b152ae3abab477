// Giving the event loop a turn inside long synchronous work (normalizing a large batch, evaluating many counters).

/** Resolves after the event loop has run what was waiting (I/O callbacks, other requests' steps). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
