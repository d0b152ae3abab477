// The live tool-call table: newest first by seq, capped in length, its DOM brought up to date once per animation frame.
import { formatTime, h, onNextFrame, show } from './dom.js';
import type { ToolCallEvent } from './stream.js';

export const ACTIONS = ['allow', 'deny', 'redact', 'flag', 'unknown'] as const;
export type ActionKey = (typeof ACTIONS)[number];

/** The counting bucket of an action: one of the four known ones, else `unknown` (null included). */
export function actionKey(action: string | null): ActionKey {
  return action === 'allow' || action === 'deny' || action === 'redact' || action === 'flag' ? action : 'unknown';
}

export class ToolCallTable {
  /** What the table shows, seq descending, at most `cap` long. */
  private rows: ToolCallEvent[] = [];
  private readonly seqs = new Set<number>();
  private readonly rendered = new Map<number, HTMLTableRowElement>();
  private readonly render = (): void => this.flush();

  constructor(
    private readonly tbody: HTMLTableSectionElement,
    private readonly emptyNote: HTMLElement,
    private readonly cap = 200,
  ) {}

  /** Adds a call unless its seq is already in the table; returns whether it was new. */
  add(call: ToolCallEvent): boolean {
    if (this.seqs.has(call.seq)) return false;
    const rows = this.rows;
    let i = 0;
    while (i < rows.length && rows[i].seq > call.seq) i++;
    if (i >= this.cap) return true; // older than everything kept
    rows.splice(i, 0, call);
    this.seqs.add(call.seq);
    while (rows.length > this.cap) this.seqs.delete((rows.pop() as ToolCallEvent).seq);
    onNextFrame(this.render);
    return true;
  }

  clear(): void {
    this.rows = [];
    this.seqs.clear();
    onNextFrame(this.render);
  }

  /** Makes the tbody match `rows`, creating only the new rows and moving none in the usual prepend case. */
  private flush(): void {
    let cursor = this.tbody.firstElementChild;
    for (const row of this.rows) {
      let tr = this.rendered.get(row.seq);
      if (!tr) {
        tr = this.createRow(row);
        this.rendered.set(row.seq, tr);
      }
      if (tr === cursor) cursor = cursor.nextElementSibling;
      else this.tbody.insertBefore(tr, cursor);
    }
    while (cursor) {
      const next = cursor.nextElementSibling;
      this.rendered.delete(Number((cursor as HTMLElement).dataset.seq));
      cursor.remove();
      cursor = next;
    }
    this.emptyNote.hidden = this.rows.length > 0;
  }

  private createRow(c: ToolCallEvent): HTMLTableRowElement {
    const key = actionKey(c.action);
    return h(
      'tr',
      { 'data-seq': c.seq, 'data-action': key },
      h('td', { class: 'time', title: c.timestamp ?? '' }, formatTime(c.timestamp)),
      h('td', { class: 'id', title: c.serverId ?? '' }, show(c.serverId)),
      h('td', { class: 'id', title: c.sessionId ?? '' }, show(c.sessionId)),
      h('td', { class: 'tool', title: c.toolName ?? '' }, show(c.toolName)),
      h('td', {}, h('span', { class: `action action-${key}` }, show(c.action))),
      h('td', { class: 'num' }, c.latencyMs === null ? '—' : `${c.latencyMs} ms`),
    );
  }
}
