// The dialog that shows one session's tool calls, read from GET /api/v1/audit-events?sessionId=.
import { api, isUnauthorized, type StoredAuditEvent } from './api.js';
import { byId, h } from './dom.js';
import { copyFrom } from './ids.js';
import type { ToolCallEvent } from './stream.js';
import { toolCallCells } from './table.js';

const LIMIT = 200;

export class SessionCalls {
  private readonly dialog = byId<HTMLDialogElement>('session-dialog');
  private readonly idEl = byId('session-dialog-id');
  private readonly note = byId('session-dialog-note');
  private readonly tbody = byId<HTMLTableSectionElement>('session-calls-body');
  private current = '';
  private generation = 0;

  constructor(private readonly signedOut: () => void) {
    byId('session-dialog-close').addEventListener('click', () => this.dialog.close());
    const copy = byId('session-dialog-copy');
    copy.addEventListener('click', () => void copyFrom(copy, this.current));
    // A click on the backdrop (outside the dialog's box) closes it too.
    this.dialog.addEventListener('click', (ev) => {
      if (ev.target === this.dialog) this.dialog.close();
    });
  }

  async open(sessionId: string): Promise<void> {
    const gen = ++this.generation;
    this.current = sessionId;
    this.idEl.textContent = sessionId;
    this.dialog.dataset.sessionId = sessionId;
    this.note.textContent = 'Loading…';
    this.tbody.replaceChildren();
    if (!this.dialog.open) this.dialog.showModal();
    try {
      const page = await api.sessionCalls(sessionId, LIMIT);
      if (gen !== this.generation) return;
      this.tbody.replaceChildren(...page.items.map((e) => h('tr', { 'data-seq': e.seq }, ...toolCallCells(fromStored(e), false))));
      const n = page.items.length;
      this.note.textContent = n === 0 ? 'No tool calls stored for this session.' : `${n}${page.nextCursor ? ` most recent (of more)` : ''} tool call${n === 1 ? '' : 's'}, newest first`;
    } catch (err) {
      if (gen !== this.generation) return;
      if (isUnauthorized(err)) {
        this.dialog.close();
        this.signedOut();
        return;
      }
      this.note.textContent = `The calls could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  close(): void {
    this.generation++;
    if (this.dialog.open) this.dialog.close();
  }
}

/** A stored tool call as the table shows streamed ones (a stored tool_call always has its tool name). */
export const fromStored = (e: StoredAuditEvent): ToolCallEvent => ({
  seq: e.seq,
  serverId: e.serverId,
  sessionId: e.sessionId,
  toolName: e.toolName ?? '',
  action: e.action,
  latencyMs: e.latencyMs,
  timestamp: e.occurredAt,
});
