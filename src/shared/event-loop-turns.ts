// Giving the event loop a turn inside long synchronous work (normalizing or preparing a large batch).

/** Entries a long per-entry loop handles between two turns of the event loop (normalizing, preparing a batch). */
export const ENTRIES_PER_TURN = 100;

/** Resolves after the event loop has run what was waiting (I/O callbacks, other requests' steps). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
