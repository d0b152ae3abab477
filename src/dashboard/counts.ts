// Counts of tool calls by action (allow, deny, redact, flag, unknown), shown in #action-counts.
import { byId, onNextFrame } from './dom.js';
import { ACTIONS, type ActionKey } from './table.js';

export class ActionCounts {
  private readonly counts = new Map<ActionKey, number>();
  private readonly cells = new Map<ActionKey, HTMLElement>();
  private readonly total: HTMLElement;
  private readonly render = (): void => this.draw();

  constructor(container: HTMLElement) {
    for (const a of ACTIONS) {
      const cell = container.querySelector<HTMLElement>(`[data-action="${a}"]`);
      if (!cell) throw new Error(`dashboard: #action-counts has no [data-action="${a}"]`);
      this.cells.set(a, cell);
    }
    this.total = byId('action-total');
    this.reset();
  }

  add(action: ActionKey): void {
    this.counts.set(action, (this.counts.get(action) ?? 0) + 1);
    onNextFrame(this.render);
  }

  reset(): void {
    for (const a of ACTIONS) this.counts.set(a, 0);
    onNextFrame(this.render);
  }

  private draw(): void {
    let total = 0;
    for (const [a, cell] of this.cells) {
      const n = this.counts.get(a) ?? 0;
      total += n;
      cell.textContent = String(n);
      cell.dataset.count = String(n);
    }
    this.total.textContent = String(total);
  }
}
