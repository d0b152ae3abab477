// Counts of tool calls by action (allow, deny, redact, flag, unknown) of the chosen window, shown in #action-counts.
import { ACTION_KEYS, type ActionKey } from '../audit/action-keys.js';
import { byId } from './dom.js';

export class ActionCounts {
  private readonly cells = new Map<ActionKey, HTMLElement>();
  private readonly total: HTMLElement;

  constructor(container: HTMLElement) {
    for (const a of ACTION_KEYS) {
      const cell = container.querySelector<HTMLElement>(`[data-action="${a}"]`);
      if (!cell) throw new Error(`dashboard: #action-counts has no [data-action="${a}"]`);
      this.cells.set(a, cell);
    }
    this.total = byId('action-total');
  }

  show(counts: Record<ActionKey, number>): void {
    let total = 0;
    for (const [a, cell] of this.cells) {
      const n = counts[a] ?? 0;
      total += n;
      cell.textContent = n.toLocaleString('en-US');
      cell.dataset.count = String(n);
    }
    this.total.textContent = total.toLocaleString('en-US');
    this.total.dataset.count = String(total);
  }
}
