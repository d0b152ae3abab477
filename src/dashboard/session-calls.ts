// The session dialog: the session's status (reason, who changed it, when), Suspend/Resume, and its tool calls, read from the API.
import { api, ApiError, isUnauthorized, type Session, type StoredAuditEvent } from './api.js';
import { byId, formatDateTime, h, show } from './dom.js';
import { copyFrom } from './ids.js';
import { runSessionOp } from './session-actions.js';
import type { ToolCallEvent } from './stream.js';
import { toolCallCells } from './table.js';

const LIMIT = 200;

export class SessionCalls {
  private readonly dialog = byId<HTMLDialogElement>('session-dialog');
  private readonly idEl = byId('session-dialog-id');
  private readonly note = byId('session-dialog-note');
  private readonly statusEl = byId('session-dialog-status');
  private readonly tbody = byId<HTMLTableSectionElement>('session-calls-body');
  private readonly explore = byId<HTMLAnchorElement>('session-dialog-explore');
  private current = '';
  private generation = 0;

  constructor(
    private readonly signedOut: () => void,
    /** A transition made here, so the sessions table shows it at once. */
    private readonly changed: (s: Session) => void,
    private readonly notify: (message: string) => void,
  ) {
    byId('session-dialog-close').addEventListener('click', () => this.dialog.close());
    const copy = byId('session-dialog-copy');
    copy.addEventListener('click', () => void copyFrom(copy, this.current));
    // A click on the backdrop (outside the dialog's box) closes it too.
    this.dialog.addEventListener('click', (ev) => {
      if (ev.target === this.dialog) this.dialog.close();
    });
    this.explore.addEventListener('click', () => this.dialog.close());
    this.statusEl.addEventListener('click', (ev) => {
      const button = (ev.target as Element).closest<HTMLButtonElement>('button[data-op]');
      if (button) void this.transition(button);
    });
  }

  async open(sessionId: string): Promise<void> {
    const gen = ++this.generation;
    this.current = sessionId;
    this.idEl.textContent = sessionId;
    this.dialog.dataset.sessionId = sessionId;
    this.explore.href = `#explore?${new URLSearchParams({ sessionId, range: 'all' })}`;
    this.note.textContent = 'Loading…';
    this.statusEl.replaceChildren();
    this.tbody.replaceChildren();
    if (!this.dialog.open) this.dialog.showModal();
    const [session, page] = await Promise.allSettled([api.session(sessionId), api.sessionCalls(sessionId, LIMIT)]);
    if (gen !== this.generation) return;
    for (const r of [session, page]) {
      if (r.status === 'rejected' && isUnauthorized(r.reason)) {
        this.dialog.close();
        this.signedOut();
        return;
      }
    }
    if (session.status === 'fulfilled') this.renderStatus(session.value);
    else this.statusEl.replaceChildren(h('p', { class: 'hint' }, session.reason instanceof ApiError && session.reason.status === 404 ? 'This session is not stored (no call has named it).' : 'The session could not be loaded.'));
    if (page.status === 'fulfilled') {
      this.tbody.replaceChildren(...page.value.items.map((e) => h('tr', { 'data-seq': e.seq, 'data-open-seq': e.seq, tabindex: 0 }, ...toolCallCells(fromStored(e), false))));
      const n = page.value.items.length;
      this.note.textContent = n === 0 ? 'No tool calls stored for this session.' : `${n}${page.value.nextCursor ? ' most recent (of more)' : ''} tool call${n === 1 ? '' : 's'}, newest first`;
    } else {
      this.note.textContent = `The calls could not be loaded: ${page.reason instanceof Error ? page.reason.message : String(page.reason)}`;
    }
  }

  close(): void {
    this.generation++;
    if (this.dialog.open) this.dialog.close();
  }

  private renderStatus(s: Session): void {
    const op = s.status === 'active' ? 'suspend' : 'resume';
    this.statusEl.dataset.status = s.status;
    this.statusEl.replaceChildren(
      h('span', { class: `status status-${s.status}`, id: 'session-dialog-state' }, s.status),
      h(
        'span',
        { class: 'hint' },
        s.status === 'suspended' ? `since ${formatDateTime(s.statusChangedAt)}${s.statusChangedBy ? ` by ${s.statusChangedBy.replace(/^user:/, '')}` : ''}` : `first seen ${formatDateTime(s.firstSeenAt)}`,
        ` · last seen ${formatDateTime(s.lastSeenAt)} · ${s.toolCallCount} call${s.toolCallCount === 1 ? '' : 's'}`,
        s.serverId ? ` · server ${s.serverId}` : '',
      ),
      s.statusReason ? h('span', { class: 'session-reason', id: 'session-dialog-reason' }, `reason: ${show(s.statusReason)}`) : '',
      h('button', { type: 'button', class: `btn small ${op === 'suspend' ? 'danger' : ''}`, 'data-op': op }, op === 'suspend' ? 'Suspend…' : 'Resume'),
    );
  }

  private async transition(button: HTMLButtonElement): Promise<void> {
    const id = this.current;
    button.disabled = true;
    try {
      const updated = await runSessionOp(id, button.dataset.op as 'suspend' | 'resume');
      if (!updated || id !== this.current) return;
      this.renderStatus(updated);
      this.changed(updated);
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      if (err instanceof ApiError && err.status === 409) {
        const fresh = await api.session(id).catch(() => null);
        if (fresh && id === this.current) this.renderStatus(fresh);
      }
      this.notify(`Could not change session ${id}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      button.disabled = false;
    }
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
