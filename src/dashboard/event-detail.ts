// The event detail panel: every field of one stored event, its whole metadata as copyable JSON, links that filter by it, and its neighbours in its session.
import { actionKey } from '../audit/action-keys.js';
import { api, isUnauthorized, type StoredAuditEvent } from './api.js';
import { byId, formatFull, formatTime, h, show } from './dom.js';
import { copyFrom } from './ids.js';
import { paramsOfQuery, type ExploreQuery } from './explore-query.js';

const NEIGHBOURS = 5;
const HOUR = 3_600_000;

/** Where a value was found in the metadata of a log source's event (log group, raw message, trace id, how it was read). */
function highlights(e: StoredAuditEvent): [string, string][] {
  const m = e.metadata;
  const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
  const cw = (m.cloudwatch !== null && typeof m.cloudwatch === 'object' ? m.cloudwatch : {}) as Record<string, unknown>;
  const out: [string, string | null][] = [
    ['Log group', text(cw.logGroup) ?? text(m.logGroup) ?? (e.source === 'cloudwatch' || e.source === 'firehose' ? text(m.source_detail) : null)],
    ['Log stream', text(cw.logStream) ?? text(m.logStream)],
    ['Service', e.source === 'datadog' ? text(m.source_detail) : null],
    ['Trace id', text(m.traceId)],
    ['Request id', text(m.requestId)],
    ['Read as', text(m.format)],
    ['Action word', text(m.actionWord) ?? text(m.rawAction)],
  ];
  return out.filter((x): x is [string, string] => x[1] !== null);
}

/** The hash of the explore view filtered by one field (or free text), over `range`. */
function exploreHash(fields: ExploreQuery['fields'], q: string, range: ExploreQuery['range']): string {
  return `#explore?${paramsOfQuery({ fields, q, range })}`;
}

export class EventPanel {
  private readonly panel = byId('event-panel');
  private readonly body = byId('event-panel-body');
  private readonly title = byId('event-panel-title');
  private generation = 0;
  /** The seq shown, or null when closed. */
  shown: number | null = null;

  constructor(
    private readonly signedOut: () => void,
    /** Called when the panel opens or closes (the view keeps `event=<seq>` in its URL). */
    private readonly onChange: (seq: number | null) => void,
  ) {
    byId('event-panel-close').addEventListener('click', () => this.close());
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && this.shown !== null) this.close();
    });
    // Any row or link carrying data-open-seq opens that event (rows of every table, the neighbours here).
    document.addEventListener('click', (ev) => {
      const target = ev.target as Element | null;
      if (target?.closest('button, a, input, select, [data-copy]')) return;
      const el = target?.closest<HTMLElement>('[data-open-seq]');
      if (!el?.dataset.openSeq) return;
      // From a row of a modal dialog (a session's calls): the dialog gives way to the panel.
      el.closest('dialog')?.close();
      void this.open(Number(el.dataset.openSeq));
    });
    document.addEventListener('keydown', (ev) => {
      const el = (ev.target as Element | null)?.closest<HTMLElement>('tr[data-open-seq]');
      if (el?.dataset.openSeq && ev.key === 'Enter') void this.open(Number(el.dataset.openSeq));
    });
  }

  /** Opens the stored event with this seq (read from the API: the whole event, metadata included). */
  async open(seq: number, known?: StoredAuditEvent): Promise<void> {
    const gen = ++this.generation;
    this.shown = seq;
    this.panel.hidden = false;
    this.panel.dataset.seq = String(seq);
    this.title.textContent = `Event ${seq}`;
    this.body.replaceChildren(h('p', { class: 'hint' }, 'Loading…'));
    this.onChange(seq);
    try {
      const e = known ?? (await api.event(seq));
      if (gen !== this.generation) return;
      if (!e) {
        this.body.replaceChildren(h('p', { class: 'empty' }, `No stored event ${seq} (removed by retention, or not of this organization).`));
        return;
      }
      this.render(e);
      void this.loadNeighbours(e, gen);
    } catch (err) {
      if (gen !== this.generation) return;
      if (isUnauthorized(err)) return this.signedOut();
      this.body.replaceChildren(h('p', { class: 'empty' }, `The event could not be loaded: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  close(): void {
    this.generation++;
    const was = this.shown;
    this.shown = null;
    this.panel.hidden = true;
    this.body.replaceChildren();
    if (was !== null) this.onChange(null);
  }

  private render(e: StoredAuditEvent): void {
    this.title.textContent = `${e.type.replace('_', ' ')} · seq ${e.seq}`;
    const at = Date.parse(e.occurredAt);
    const around = { from: at - HOUR, to: at + HOUR };
    // A filter link closes the panel (its results are behind it at phone width) and goes to the explore view.
    const link = (label: string, hash: string, what: string) => {
      const a = h('a', { class: 'btn small', href: hash, 'data-filter': what }, label);
      a.addEventListener('click', () => this.close());
      return a;
    };
    const links = [
      e.sessionId ? link('Same session', exploreHash({ sessionId: e.sessionId }, '', { preset: 'all' }), 'session') : null,
      e.serverId ? link('Same server', exploreHash({ serverId: e.serverId }, '', { preset: '24h' }), 'server') : null,
      e.toolName ? link('Same tool', exploreHash({ toolName: e.toolName }, '', { preset: '24h' }), 'tool') : null,
      typeof e.metadata.traceId === 'string' && e.metadata.traceId ? link('Same trace (±1 h)', exploreHash({}, e.metadata.traceId, around), 'trace') : null,
    ].filter((x): x is HTMLAnchorElement => x !== null);

    const field = (name: string, value: string | null, opts: { mono?: boolean; copy?: string | null } = {}) =>
      h(
        'div',
        { class: 'field', 'data-field': name },
        h('dt', {}, name),
        h('dd', { class: opts.mono ? 'mono' : '' }, show(value), opts.copy ? h('button', { type: 'button', class: 'copy-btn', 'data-copy': opts.copy, 'aria-label': `Copy ${name}` }, 'copy') : ''),
      );
    const fields = h(
      'dl',
      { class: 'fields' },
      field('Time', formatFull(e.occurredAt), { mono: true, copy: e.occurredAt }),
      field('Received', formatFull(e.receivedAt), { mono: true }),
      field('Type', e.type),
      field('Source', e.source),
      field('Server', e.serverId, { mono: true, copy: e.serverId }),
      field('Session', e.sessionId, { mono: true, copy: e.sessionId }),
      field('Tool', e.toolName, { mono: true }),
      field('Action', e.action),
      field('Latency', e.latencyMs === null ? null : `${e.latencyMs} ms`),
      field('Seq', String(e.seq), { mono: true }),
      ...highlights(e).map(([name, value]) => field(name, value, { mono: true, copy: value })),
    );
    const message = typeof e.metadata.message === 'string' ? e.metadata.message : null;
    const json = JSON.stringify(e.metadata, null, 2);
    const copyJson = h('button', { type: 'button', class: 'btn small', id: 'event-json-copy' }, 'Copy JSON');
    copyJson.addEventListener('click', () => void copyFrom(copyJson, JSON.stringify(e, null, 2)));
    this.body.replaceChildren(
      links.length ? h('div', { class: 'filter-links' }, ...links) : '',
      fields,
      message === null ? '' : h('section', { class: 'raw-message' }, h('h3', {}, 'Raw message'), h('pre', { id: 'event-raw-message' }, message)),
      h('section', { class: 'metadata' }, h('div', { class: 'panel-head' }, h('h3', {}, 'Metadata'), copyJson), h('pre', { id: 'event-metadata', class: 'json' }, json)),
      e.sessionId ? h('section', { class: 'neighbours' }, h('h3', {}, 'In the same session'), h('ol', { id: 'event-neighbours', class: 'neighbour-list' }, h('li', { class: 'hint' }, 'Loading…'))) : '',
    );
  }

  /** The events just before and after this one in its session, the event itself marked between them. */
  private async loadNeighbours(e: StoredAuditEvent, gen: number): Promise<void> {
    if (!e.sessionId) return;
    const q = (order: 'asc' | 'desc') => new URLSearchParams({ sessionId: e.sessionId as string, order, limit: String(NEIGHBOURS), cursor: String(e.seq) });
    try {
      const [before, after] = await Promise.all([api.events(q('desc')), api.events(q('asc'))]);
      if (gen !== this.generation) return;
      const list = this.body.querySelector('#event-neighbours');
      if (!list) return;
      const item = (n: StoredAuditEvent, current = false) =>
        h(
          'li',
          { class: current ? 'neighbour current' : 'neighbour', 'data-open-seq': current ? null : n.seq, 'data-seq': n.seq },
          h('span', { class: 'time' }, formatTime(n.occurredAt)),
          h('span', { class: 'tool' }, show(n.toolName ?? n.type)),
          h('span', { class: `action action-${actionKey(n.action)}` }, show(n.action)),
        );
      list.replaceChildren(...[...after.items].reverse().map((n) => item(n)), item(e, true), ...before.items.map((n) => item(n)));
    } catch (err) {
      if (gen !== this.generation) return;
      if (isUnauthorized(err)) return this.signedOut();
      this.body.querySelector('#event-neighbours')?.replaceChildren(h('li', { class: 'hint' }, 'The session could not be loaded.'));
    }
  }
}
