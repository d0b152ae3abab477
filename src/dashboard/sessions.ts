// The sessions table: loaded from /api/v1/sessions, kept current by session_update and tool_call events, with Suspend (confirmed, with a reason) and Resume.
import { ApiError, isUnauthorized, type Session } from './api.js';
import { byId, formatDateTime, h, onNextFrame } from './dom.js';
import { copyableId, sessionId } from './ids.js';
import { runSessionOp, type SessionOp } from './session-actions.js';
import { cell } from './table.js';
import type { SessionUpdateEvent, ToolCallEvent } from './stream.js';

type Op = SessionOp;

/** What live tool calls tell of a session not listed yet (its last call time is unknown until one arrives). */
type Seed = Pick<Session, 'serverId' | 'toolCallCount'> & { lastSeenAt: string | null };

const time = (iso: string | null): number => (iso ? Date.parse(iso) : NaN);
/** Whether `a` is known to be strictly earlier than `b`. */
const before = (a: string | null, b: string | null): boolean => time(a) < time(b);

export class SessionsView {
  private readonly rows = new Map<string, { session: Session; tr: HTMLTableRowElement }>();
  /** Tool calls of sessions not listed yet: their session_update (created) usually comes right after the first call. */
  private readonly seeds = new Map<string, Seed>();
  private readonly busy = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly render = (): void => this.flush();

  constructor(
    private readonly tbody: HTMLTableSectionElement,
    private readonly emptyNote: HTMLElement,
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
    private readonly cap = 500,
  ) {
    tbody.addEventListener('click', (ev) => {
      const button = (ev.target as Element).closest<HTMLButtonElement>('button[data-op]');
      const id = button?.closest<HTMLElement>('tr[data-session-id]')?.dataset.sessionId;
      if (button && id !== undefined) void this.run(id, button.dataset.op as Op);
    });
  }

  /** The window's session counters: sessions whose latest call is in the window, by status now. */
  showCounters(c: { seen: number; active: number; suspended: number }): void {
    for (const [id, n] of [['sessions-seen', c.seen], ['sessions-active', c.active], ['sessions-suspended', c.suspended]] as const) {
      const el = byId(id);
      el.textContent = n.toLocaleString('en-US');
      el.dataset.count = String(n);
    }
  }

  load(items: Session[]): void {
    this.clear();
    for (const s of items) this.insert({ ...s }, 'append');
  }

  clear(): void {
    this.rows.clear();
    this.seeds.clear();
    this.busy.clear();
    this.dirty.clear();
    this.tbody.replaceChildren();
    this.emptyNote.hidden = false;
  }

  applyUpdate(e: SessionUpdateEvent): void {
    if (!e.sessionId || !e.status) return;
    const row = this.rows.get(e.sessionId);
    if (!row) {
      const seed = this.seeds.get(e.sessionId);
      this.seeds.delete(e.sessionId);
      this.insert(
        {
          sessionId: e.sessionId,
          serverId: seed?.serverId ?? null,
          status: e.status,
          statusReason: null,
          statusChangedBy: null,
          firstSeenAt: e.timestamp,
          lastSeenAt: seed?.lastSeenAt ?? e.timestamp,
          toolCallCount: seed?.toolCallCount ?? 0,
          statusChangedAt: e.timestamp,
        },
        'prepend',
      );
      return;
    }
    // The list may already show a later change than a replayed event.
    if (before(e.timestamp, row.session.statusChangedAt)) return;
    if (row.session.status !== e.status) row.session.statusReason = null;
    row.session.status = e.status;
    row.session.statusChangedAt = e.timestamp;
    this.markDirty(e.sessionId);
  }

  noteToolCall(c: ToolCallEvent): void {
    if (!c.sessionId) return;
    const row = this.rows.get(c.sessionId);
    const target: Seed = row?.session ?? this.seed(c.sessionId);
    target.toolCallCount++;
    target.serverId ??= c.serverId;
    if (!target.lastSeenAt || before(target.lastSeenAt, c.timestamp)) target.lastSeenAt = c.timestamp;
    if (row) this.markDirty(c.sessionId);
  }

  private seed(id: string): Seed {
    let seed = this.seeds.get(id);
    if (!seed) {
      seed = { serverId: null, toolCallCount: 0, lastSeenAt: null };
      this.seeds.set(id, seed);
      if (this.seeds.size > 1000) this.seeds.delete(this.seeds.keys().next().value as string);
    }
    return seed;
  }

  private insert(session: Session, where: 'append' | 'prepend'): void {
    const tr = h('tr', { 'data-session-id': session.sessionId });
    this.rows.set(session.sessionId, { session, tr });
    this.fill(session, tr);
    if (where === 'append') this.tbody.append(tr);
    else this.tbody.prepend(tr);
    while (this.rows.size > this.cap) {
      const last = this.tbody.lastElementChild as HTMLElement | null;
      if (!last) break;
      this.rows.delete(last.dataset.sessionId ?? '');
      last.remove();
    }
    this.emptyNote.hidden = true;
  }

  private markDirty(id: string): void {
    this.dirty.add(id);
    onNextFrame(this.render);
  }

  private flush(): void {
    for (const id of this.dirty) {
      const row = this.rows.get(id);
      if (row) this.fill(row.session, row.tr);
    }
    this.dirty.clear();
  }

  private fill(s: Session, tr: HTMLTableRowElement): void {
    const busy = this.busy.has(s.sessionId);
    const op: Op | null = s.status === 'active' ? 'suspend' : s.status === 'suspended' ? 'resume' : null;
    tr.dataset.state = s.status;
    tr.replaceChildren(
      cell('Session', { class: 'id session-cell' }, sessionId(s.sessionId), h('span', { class: 'session-server' }, 'server ', copyableId(s.serverId))),
      cell('Status', { 'data-status': s.status, title: s.statusReason ? `reason: ${s.statusReason}` : '' }, h('span', { class: `status status-${s.status}` }, s.status)),
      cell('Calls', { class: 'num' }, String(s.toolCallCount)),
      cell('Last seen', { class: 'time', title: s.lastSeenAt ?? '' }, formatDateTime(s.lastSeenAt)),
      cell(
        '',
        { class: 'op' },
        op
          ? h(
              'button',
              { type: 'button', class: `btn small ${op === 'suspend' ? 'danger' : ''}`, 'data-op': op, disabled: busy, 'aria-label': `${op === 'suspend' ? 'Suspend' : 'Resume'} session ${s.sessionId}` },
              op === 'suspend' ? 'Suspend' : 'Resume',
            )
          : '',
      ),
    );
  }

  /** A session as the API answered it (after a transition made here or in the session dialog). */
  applySession(updated: Session): void {
    const row = this.rows.get(updated.sessionId);
    if (row && !before(updated.statusChangedAt, row.session.statusChangedAt)) {
      Object.assign(row.session, updated);
      this.markDirty(updated.sessionId);
    }
  }

  private async run(id: string, op: Op): Promise<void> {
    if (this.busy.has(id)) return;
    this.busy.add(id);
    this.markDirty(id);
    try {
      const updated = await runSessionOp(id, op);
      if (updated) this.applySession(updated);
    } catch (err) {
      if (isUnauthorized(err)) {
        this.signedOut();
        return;
      }
      const row = this.rows.get(id);
      if (err instanceof ApiError && err.status === 409 && (err.body?.status === 'active' || err.body?.status === 'suspended') && row) {
        row.session.status = err.body.status;
        this.notify(`Session ${id} is already ${err.body.status}.`);
      } else {
        this.notify(`Could not ${op} session ${id}: ${err instanceof Error ? err.message : String(err)}`);
      }
    } finally {
      this.busy.delete(id);
      this.markDirty(id);
    }
  }
}
