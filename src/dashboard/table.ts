// The live tool-call table: newest first by seq, capped in length, filterable (over the rows shown; Explore searches the history), a row opens the event; DOM brought up to date once per animation frame.
import { actionKey } from '../audit/action-keys.js';
import { formatTime, h, onNextFrame, show } from './dom.js';
import { copyableId, sessionId } from './ids.js';
import type { ToolCallEvent } from './stream.js';

/** A table cell with the label stacked cards show at phone width. */
export const cell = (label: string, attrs: Record<string, string>, ...children: (Node | string)[]): HTMLTableCellElement =>
  h('td', { 'data-label': label, ...attrs }, ...children);

/** The cells of one tool call, shared by the live table and a session's calls; `withSession` adds the session column. */
export function toolCallCells(c: ToolCallEvent, withSession: boolean): HTMLTableCellElement[] {
  const key = actionKey(c.action);
  return [
    cell('Time', { class: 'time', title: c.timestamp ?? '' }, formatTime(c.timestamp)),
    cell('Server', { class: 'id' }, copyableId(c.serverId)),
    ...(withSession ? [cell('Session', { class: 'id' }, sessionId(c.sessionId))] : []),
    cell('Tool', { class: 'tool' }, show(c.toolName)),
    cell('Action', { class: 'action-cell' }, h('span', { class: `action action-${key}` }, show(c.action))),
    cell('Latency', { class: 'num' }, c.latencyMs === null ? '—' : `${c.latencyMs} ms`),
  ];
}

export class ToolCallTable {
  /** What the table shows, seq descending, at most `cap` long. */
  private rows: ToolCallEvent[] = [];
  private readonly seqs = new Set<number>();
  private readonly rendered = new Map<number, HTMLTableRowElement>();
  private filter = '';
  private readonly render = (): void => this.flush();

  constructor(
    private readonly tbody: HTMLTableSectionElement,
    private readonly emptyNote: HTMLElement,
    private readonly shownNote: HTMLElement,
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

  /** Shows only calls whose server, session, tool or action contains every word of `text` (case-insensitive). */
  setFilter(text: string): void {
    this.filter = text.trim().toLowerCase();
    for (const [seq, tr] of this.rendered) tr.hidden = !this.matches(this.rows.find((r) => r.seq === seq));
    this.updateNotes();
  }

  private matches(c: ToolCallEvent | undefined): boolean {
    if (!c) return false;
    if (!this.filter) return true;
    const hay = [c.serverId, c.sessionId, c.toolName, c.action].map((v) => (v ?? '').toLowerCase()).join('\n');
    return this.filter.split(/\s+/).every((word) => hay.includes(word));
  }

  /** Makes the tbody match `rows`, creating only the new rows and moving none in the usual prepend case. */
  private flush(): void {
    let cursor = this.tbody.firstElementChild;
    for (const row of this.rows) {
      let tr = this.rendered.get(row.seq);
      if (!tr) {
        tr = h('tr', { 'data-seq': row.seq, 'data-open-seq': row.seq, tabindex: 0, 'data-action': actionKey(row.action) }, ...toolCallCells(row, true));
        tr.hidden = !this.matches(row);
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
    this.updateNotes();
  }

  private updateNotes(): void {
    const shown = this.filter ? this.rows.filter((r) => this.matches(r)).length : this.rows.length;
    this.emptyNote.hidden = shown > 0;
    this.emptyNote.textContent = this.filter && this.rows.length ? 'No tool call matches the filter.' : 'Waiting for tool calls…';
    this.shownNote.textContent = this.filter ? `${shown} of ${this.rows.length} shown` : `newest first · last ${this.cap}`;
  }
}
