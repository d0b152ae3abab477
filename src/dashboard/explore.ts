// The explore screen: a query over the whole stored history (field filters, free text, time range), paged from the API, counted, exported, and live with pause.
import { api, ApiError, isUnauthorized, type Me, type StoredAuditEvent } from './api.js';
import { byId, localInputValue, shortUtcOffset, zoneLabel } from './dom.js';
import type { EventPanel } from './event-detail.js';
import { storedEventRow } from './event-rows.js';
import {
  apiFilterParams,
  apiRange,
  describeQuery,
  FIELD_FILTERS,
  isOpenEnded,
  paramsOfQuery,
  queryFromParams,
  RANGE_PRESETS,
  resolveRange,
  type ExploreQuery,
} from './explore-query.js';
import { Screens, type Screen } from './screens.js';

const PAGE = 100;
/** New events read per request while live. */
const LIVE_PAGE = 500;
/** Rows kept on the page; older ones are dropped (and read again by "Load older"). */
const MAX_ROWS = 5000;
/** New events held while paused; past it the view is read afresh on resume. */
const MAX_WAITING = 5000;
/** How often a live view asks for new events even without a stream event (log entries are not streamed). */
const POLL_MS = 10_000;

export class ExploreView implements Screen {
  readonly name = 'explore';
  readonly view = byId('explore-view');
  readonly navLink = byId('nav-explore');
  private readonly form = byId<HTMLFormElement>('explore-form');
  private readonly rangeSelect = byId<HTMLSelectElement>('explore-range');
  private readonly fromInput = byId<HTMLInputElement>('explore-from');
  private readonly toInput = byId<HTMLInputElement>('explore-to');
  private readonly tbody = byId<HTMLTableSectionElement>('explore-body');
  private readonly countEl = byId('explore-count');
  private readonly summaryEl = byId('explore-summary');
  private readonly liveEl = byId('explore-live');
  private readonly pauseButton = byId<HTMLButtonElement>('explore-pause');
  private readonly waitingEl = byId('explore-waiting');
  private readonly moreButton = byId<HTMLButtonElement>('explore-more');
  private readonly noteEl = byId('explore-note');
  private readonly errorEl = byId('explore-error');
  private readonly emptyEl = byId('explore-empty');

  private query: ExploreQuery | null = null;
  private rows: StoredAuditEvent[] = [];
  private readonly seqs = new Set<number>();
  /** The newest seq read for this query: new events are read after it. */
  private newestSeq = 0;
  /** The cursor of the next older page, null when the oldest is shown. */
  private olderCursor: string | null = null;
  private count: { n: number; capped: boolean; asOfSeq: number } | null = null;
  /** Seqs of new events shown before the count answered: counted on top of it when they are past its asOfSeq. */
  private shownBeforeCount: number[] = [];
  private paused = false;
  private waiting: StoredAuditEvent[] = [];
  private waitingOverflow = false;
  private fetchingNew = false;
  private fetchAgain = false;
  private generation = 0;
  private visible = false;
  private pollTimer = 0;

  constructor(
    private readonly panel: EventPanel,
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
  ) {
    byId('explore-zone').textContent = `times in ${zoneLabel()}`;
    byId('explore-time-head').textContent = `Time (${shortUtcOffset()})`;
    this.form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.submit();
    });
    this.rangeSelect.addEventListener('change', () => {
      if (this.rangeSelect.value === 'custom' && !this.fromInput.value) {
        const { from, to } = resolveRange(this.query?.range ?? { preset: '24h' }, Date.now());
        this.fromInput.value = localInputValue(from ?? Date.now() - 86_400_000);
        this.toInput.value = localInputValue(to ?? Date.now());
      }
      this.showCustom();
      if (this.rangeSelect.value !== 'custom') this.submit();
    });
    byId('explore-clear').addEventListener('click', () => {
      this.form.reset();
      this.rangeSelect.value = '24h';
      this.showCustom();
      this.submit();
    });
    this.pauseButton.addEventListener('click', () => (this.paused ? this.resume() : this.pause()));
    byId('explore-resume').addEventListener('click', () => this.resume());
    this.moreButton.addEventListener('click', () => void this.loadOlder());
    byId('explore-export').addEventListener('click', (ev) => {
      if (!this.query) return ev.preventDefault();
      (ev.currentTarget as HTMLAnchorElement).href = api.exportUrl(apiFilterParams(this.query, Date.now()));
    });
  }

  available(_me: Me): boolean {
    return true;
  }

  show(params: URLSearchParams): void {
    this.visible = true;
    const next = queryFromParams(params);
    const same = this.query !== null && paramsOfQuery(next).toString() === paramsOfQuery(this.query).toString();
    if (!same) {
      this.query = next;
      this.fillForm(next);
      void this.run();
    }
    this.startPolling();
    const event = Number(params.get('event'));
    if (Number.isSafeInteger(event) && event > 0 && this.panel.shown !== event) void this.panel.open(event);
  }

  hide(): void {
    this.visible = false;
    window.clearInterval(this.pollTimer);
  }

  reset(): void {
    this.generation++;
    this.fetchingNew = false;
    this.fetchAgain = false;
    this.query = null;
    this.clearRows();
    this.count = null;
    this.paused = false;
    this.waiting = [];
    this.waitingOverflow = false;
    this.renderStatus();
  }

  /** A stream event arrived (any type): a live view reads the new events of its query. */
  onStreamEvent(seq: number): void {
    if (this.visible && this.query && isOpenEnded(this.query.range) && seq > this.newestSeq) void this.fetchNew();
  }

  /** The detail panel opened or closed: keep `event=<seq>` in the URL so the view with its event can be shared. */
  noteOpenEvent(seq: number | null): void {
    if (!this.visible || !this.query) return;
    const params = paramsOfQuery(this.query);
    if (seq !== null) params.set('event', String(seq));
    Screens.write(this.name, params);
  }

  private fillForm(q: ExploreQuery): void {
    for (const f of FIELD_FILTERS) byId<HTMLInputElement | HTMLSelectElement>(`explore-${f}`).value = q.fields[f] ?? '';
    byId<HTMLInputElement>('explore-q').value = q.q;
    if ('preset' in q.range) this.rangeSelect.value = q.range.preset;
    else {
      this.rangeSelect.value = 'custom';
      this.fromInput.value = localInputValue(q.range.from);
      this.toInput.value = localInputValue(q.range.to);
    }
    this.showCustom();
  }

  private showCustom(): void {
    const custom = this.rangeSelect.value === 'custom';
    for (const el of [this.fromInput, this.toInput]) el.closest<HTMLElement>('label')!.hidden = !custom;
  }

  private readForm(): ExploreQuery | null {
    const fields: ExploreQuery['fields'] = {};
    for (const f of FIELD_FILTERS) {
      const v = byId<HTMLInputElement | HTMLSelectElement>(`explore-${f}`).value.trim();
      if (v) fields[f] = v;
    }
    const q = byId<HTMLInputElement>('explore-q').value.trim();
    if (this.rangeSelect.value !== 'custom') return { fields, q, range: { preset: this.rangeSelect.value in RANGE_PRESETS ? this.rangeSelect.value : '24h' } };
    const from = new Date(this.fromInput.value).getTime();
    const to = new Date(this.toInput.value).getTime();
    if (!Number.isFinite(from) || !Number.isFinite(to) || from >= to) {
      this.showError('Choose a start before the end of the custom range.');
      return null;
    }
    return { fields, q, range: { from, to } };
  }

  private submit(): void {
    const q = this.readForm();
    if (!q) return;
    this.query = q;
    Screens.write(this.name, paramsOfQuery(q), 'push');
    this.panel.close();
    void this.run();
  }

  private clearRows(): void {
    this.rows = [];
    this.seqs.clear();
    this.newestSeq = 0;
    this.olderCursor = null;
    this.tbody.replaceChildren();
  }

  /** Reads the query afresh: its first page (newest first) and its count. */
  private async run(): Promise<void> {
    const query = this.query;
    if (!query) return;
    const gen = ++this.generation;
    // A read of new events of the previous query may still be under way: it ends at its next generation check.
    this.fetchingNew = false;
    this.fetchAgain = false;
    this.clearRows();
    this.count = null;
    this.shownBeforeCount = [];
    this.waiting = [];
    this.waitingOverflow = false;
    this.showError('');
    this.summaryEl.textContent = describeQuery(query);
    this.noteEl.textContent = 'Searching…';
    this.renderStatus();
    const now = Date.now();
    const filters = apiFilterParams(query, now);
    const narrowed = apiRange(query, now).narrowed;
    try {
      const page = await api.events(new URLSearchParams([...filters, ['order', 'desc'], ['limit', String(PAGE)]]));
      if (gen !== this.generation) return;
      this.appendOlder(page.items);
      this.olderCursor = page.nextCursor;
      this.newestSeq = page.items[0]?.seq ?? 0;
      this.noteEl.textContent = narrowed ? 'Free text searches one day at most: the last 24 h of the range are searched.' : '';
      this.renderStatus();
      const c = await api.count(filters);
      if (gen !== this.generation) return;
      const later = this.shownBeforeCount.filter((seq) => seq > c.asOfSeq).length;
      this.shownBeforeCount = [];
      this.count = { n: c.capped ? c.count : c.count + later, capped: c.capped, asOfSeq: c.asOfSeq };
      // Events read after the first page that the count already holds are not counted twice.
      this.renderStatus();
    } catch (err) {
      if (gen === this.generation) this.fail(err);
    }
  }

  private async loadOlder(): Promise<void> {
    const query = this.query;
    if (!query || this.olderCursor === null) return;
    const gen = this.generation;
    this.moreButton.disabled = true;
    try {
      const params = new URLSearchParams([...apiFilterParams(query, Date.now()), ['order', 'desc'], ['limit', String(PAGE)], ['cursor', this.olderCursor]]);
      const page = await api.events(params);
      if (gen !== this.generation) return;
      this.appendOlder(page.items);
      this.olderCursor = page.nextCursor;
      this.renderStatus();
    } catch (err) {
      if (gen === this.generation) this.fail(err);
    } finally {
      this.moreButton.disabled = false;
    }
  }

  /** Reads the events of the query newer than the newest read, page after page; held while paused. */
  private async fetchNew(): Promise<void> {
    const query = this.query;
    if (!query || !isOpenEnded(query.range)) return;
    if (this.fetchingNew) {
      this.fetchAgain = true;
      return;
    }
    if (this.paused && this.waitingOverflow) return;
    const gen = this.generation;
    this.fetchingNew = true;
    try {
      for (;;) {
        const params = new URLSearchParams([...apiFilterParams(query, Date.now()), ['order', 'asc'], ['limit', String(LIVE_PAGE)], ['cursor', String(this.newestSeq)]]);
        const page = await api.events(params);
        if (gen !== this.generation) return;
        const fresh = page.items.filter((e) => !this.seqs.has(e.seq));
        if (page.items.length) this.newestSeq = page.items[page.items.length - 1].seq;
        if (this.paused) {
          this.waiting.push(...fresh);
          if (this.waiting.length > MAX_WAITING) this.waitingOverflow = true;
        } else this.prependNewer(fresh);
        this.renderStatus();
        if (page.items.length < LIVE_PAGE || (this.paused && this.waitingOverflow)) break;
      }
    } catch (err) {
      if (gen === this.generation && isUnauthorized(err)) this.signedOut();
    } finally {
      if (gen === this.generation) this.fetchingNew = false;
      if (this.fetchAgain && gen === this.generation) {
        this.fetchAgain = false;
        void this.fetchNew();
      }
    }
  }

  private pause(): void {
    this.paused = true;
    this.renderStatus();
  }

  private resume(): void {
    this.paused = false;
    if (this.waitingOverflow) {
      void this.run();
      return;
    }
    const held = this.waiting;
    this.waiting = [];
    this.prependNewer(held);
    this.renderStatus();
    void this.fetchNew();
  }

  private startPolling(): void {
    window.clearInterval(this.pollTimer);
    this.pollTimer = window.setInterval(() => {
      if (this.visible && this.query && isOpenEnded(this.query.range)) void this.fetchNew();
    }, POLL_MS);
  }

  /** Older events, below the rows shown (seq descending). */
  private appendOlder(items: StoredAuditEvent[]): void {
    const nodes: HTMLTableRowElement[] = [];
    for (const e of items) {
      if (this.seqs.has(e.seq)) continue;
      this.seqs.add(e.seq);
      this.rows.push(e);
      nodes.push(storedEventRow(e));
    }
    this.tbody.append(...nodes);
  }

  /** Newer events (seq ascending), on top of the rows shown; the oldest rows go past MAX_ROWS. */
  private prependNewer(items: StoredAuditEvent[]): void {
    const fresh = items.filter((e) => !this.seqs.has(e.seq));
    if (fresh.length === 0) return;
    const nodes = fresh.map((e) => {
      this.seqs.add(e.seq);
      return storedEventRow(e);
    });
    this.tbody.prepend(...nodes.reverse());
    this.rows.unshift(...[...fresh].reverse());
    if (this.count === null) this.shownBeforeCount.push(...fresh.map((e) => e.seq));
    else if (!this.count.capped) this.count.n += fresh.filter((e) => e.seq > (this.count as { asOfSeq: number }).asOfSeq).length;
    if (this.rows.length > MAX_ROWS) {
      for (const e of this.rows.splice(MAX_ROWS)) {
        this.seqs.delete(e.seq);
        this.tbody.querySelector(`tr[data-seq="${e.seq}"]`)?.remove();
      }
      this.olderCursor = String(this.rows[this.rows.length - 1].seq);
    }
  }

  private renderStatus(): void {
    const q = this.query;
    const live = q !== null && isOpenEnded(q.range);
    const n = this.rows.length;
    this.countEl.textContent = this.count === null ? '' : `${this.count.n.toLocaleString('en-US')}${this.count.capped ? '+' : ''} matching`;
    this.countEl.dataset.count = this.count === null ? '' : String(this.count.n);
    this.countEl.dataset.capped = String(this.count?.capped ?? false);
    this.liveEl.textContent = !live ? 'not live: the range ends in the past' : this.paused ? 'paused' : 'live';
    this.liveEl.dataset.state = !live ? 'off' : this.paused ? 'paused' : 'live';
    this.pauseButton.hidden = !live;
    this.pauseButton.textContent = this.paused ? 'Resume' : 'Pause';
    this.pauseButton.setAttribute('aria-pressed', String(this.paused));
    const waiting = this.waiting.length;
    this.waitingEl.hidden = !this.paused;
    this.waitingEl.dataset.waiting = String(waiting);
    byId('explore-waiting-text').textContent = this.waitingOverflow
      ? `More than ${MAX_WAITING.toLocaleString('en-US')} new events waiting; resume reads the view afresh.`
      : `${waiting.toLocaleString('en-US')} new event${waiting === 1 ? '' : 's'} waiting.`;
    this.moreButton.hidden = this.olderCursor === null;
    this.emptyEl.hidden = n > 0 || this.noteEl.textContent === 'Searching…';
    byId('explore-shown').textContent = n ? `${n.toLocaleString('en-US')} shown, newest first` : '';
  }

  private showError(message: string): void {
    this.errorEl.textContent = message;
    this.errorEl.hidden = !message;
  }

  private fail(err: unknown): void {
    if (isUnauthorized(err)) return this.signedOut();
    this.noteEl.textContent = '';
    const message = err instanceof ApiError ? `${err.message}${err.body?.issues ? `: ${(err.body.issues as { message: string }[]).map((i) => i.message).join('; ')}` : ''}` : String(err);
    this.showError(`The search failed: ${message}`);
    this.renderStatus();
    if (!(err instanceof ApiError) || err.status >= 500) this.notify(`The search failed: ${message}`);
  }
}
