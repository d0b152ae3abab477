// The live screen: the chosen window's figures (counts, chart, sessions, anomalies), the latest tool calls and the sessions, kept live from the stream.
import { STATS_WINDOW_NAMES, type StatsWindow } from '../audit/stats-windows.js';
import { AnomalyList, anomalyFromStats } from './anomalies.js';
import { api, isUnauthorized, type Me, type Session } from './api.js';
import { RateChart } from './chart.js';
import { ActionCounts } from './counts.js';
import { byId, onNextFrame, shortUtcOffset, zoneLabel } from './dom.js';
import { Screens, type Screen } from './screens.js';
import { fromStored } from './session-calls.js';
import { SessionsView } from './sessions.js';
import type { AnomalyEvent, SessionUpdateEvent, ToolCallEvent } from './stream.js';
import { ToolCallTable } from './table.js';
import { WindowFigures } from './window-figures.js';

/** How often the window's figures are read again from the server (the window slides; session counters move). */
const STATS_REFRESH_MS = 60_000;
/** Where the chosen window is remembered when the address does not say it. */
const WINDOW_KEY = 'audit-stream:window';

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function rememberedWindow(): StatsWindow | null {
  try {
    const w = localStorage.getItem(WINDOW_KEY);
    return w && (STATS_WINDOW_NAMES as string[]).includes(w) ? (w as StatsWindow) : null;
  } catch {
    return null;
  }
}

export class LiveScreen implements Screen {
  readonly name = 'live';
  readonly view = byId('dashboard');
  readonly navLink = byId<HTMLAnchorElement>('nav-live');
  private readonly table = new ToolCallTable(byId<HTMLTableSectionElement>('tool-calls-body'), byId('tool-calls-empty'), byId('calls-shown'));
  private readonly counts = new ActionCounts(byId('action-counts'));
  private readonly chart = new RateChart(byId<SVGSVGElement>('rate-chart'), byId('rate-axis'), byId('rate-scale'), byId('rate-summary'), byId('rate-title'), byId('rate-bursts'));
  readonly anomalies: AnomalyList;
  readonly sessions: SessionsView;
  private readonly figures = new WindowFigures(() => this.scheduleStats(0));
  private statsTimer = 0;
  private statsGeneration = 0;
  private loadGeneration = 0;
  private signedIn = false;

  constructor(
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
  ) {
    this.anomalies = new AnomalyList(byId('anomalies'), byId<HTMLUListElement>('anomaly-list'), byId('anomalies-empty'), byId('anomaly-count'), byId<HTMLButtonElement>('anomalies-clear'), byId('anomalies-ack'), (seq) => this.acknowledge(seq));
    this.sessions = new SessionsView(byId<HTMLTableSectionElement>('sessions-body'), byId('sessions-empty'), notify, signedOut);
    byId('calls-time-head').textContent = `Time (${shortUtcOffset()})`;
    for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>('[data-window]'))) {
      button.addEventListener('click', () => this.selectWindow(button.dataset.window as StatsWindow, true));
    }
    byId<HTMLInputElement>('calls-filter').addEventListener('input', (ev) => this.table.setFilter((ev.target as HTMLInputElement).value));
    window.setInterval(() => {
      if (!this.signedIn) return;
      this.figures.slide(Date.now());
      this.drawFigures();
    }, 5000);
  }

  available(_me: Me): boolean {
    return true;
  }

  show(params: URLSearchParams): void {
    const asked = params.get('window');
    const w = asked && (STATS_WINDOW_NAMES as string[]).includes(asked) ? (asked as StatsWindow) : (rememberedWindow() ?? '1h');
    this.selectWindow(w, false);
  }

  hide(): void {}

  /** Forgets everything shown (sign-out, another organization). */
  reset(): void {
    this.loadGeneration++;
    this.statsGeneration++;
    this.signedIn = false;
    window.clearTimeout(this.statsTimer);
    this.table.clear();
    this.anomalies.reset();
    this.sessions.clear();
    this.figures.reset();
    this.drawFigures();
  }

  toolCall(e: ToolCallEvent): void {
    byId('getting-started').hidden = true;
    this.table.add(e);
    this.figures.addCall(e);
    this.sessions.noteToolCall(e);
    this.drawFigures();
  }

  anomaly(e: AnomalyEvent): void {
    this.anomalies.add(e);
  }

  sessionUpdate(e: SessionUpdateEvent): void {
    this.sessions.applyUpdate(e);
    this.scheduleStats(1500); // the session counters
  }

  sessionChanged(s: Session): void {
    this.sessions.applySession(s);
  }

  /**
   * Loads sessions, the window's figures (as of seq S), then the latest tool calls (up to seq T); resolves with the seq
   * the stream should start after: the lower of S and T, so it brings every call the figures or the table lack (the
   * table drops the ones it has, the figures count only seqs above S, the sessions count calls after their list was
   * read). Null when the load was superseded or the login ended.
   */
  async load(me: Me): Promise<number | null> {
    const gen = ++this.loadGeneration;
    this.signedIn = true;
    if (me.organizations.length === 0) {
      this.notify('This account belongs to no organization, so there is nothing to show.');
      return null;
    }
    try {
      const page = await api.sessions(100);
      if (gen !== this.loadGeneration) return null;
      this.sessions.load(page.items);
      byId('getting-started').hidden = page.items.length > 0;
    } catch (err) {
      if (gen !== this.loadGeneration) return null;
      if (isUnauthorized(err)) return this.endedLogin();
      this.notify(`Sessions could not be loaded: ${messageOf(err)}`);
    }
    const statsSeq = await this.loadStats();
    if (gen !== this.loadGeneration) return null;
    let tableSeq = 0;
    try {
      const page = await api.recentToolCalls(200);
      if (gen !== this.loadGeneration) return null;
      for (const e of page.items) {
        this.table.add(fromStored(e));
        tableSeq = Math.max(tableSeq, e.seq);
      }
      if (page.items.length > 0) byId('getting-started').hidden = true;
    } catch (err) {
      if (gen !== this.loadGeneration) return null;
      if (isUnauthorized(err)) return this.endedLogin();
      console.warn(`dashboard: recent tool calls could not be loaded: ${messageOf(err)}`);
    }
    return statsSeq === null ? tableSeq : tableSeq > 0 ? Math.min(statsSeq, tableSeq) : statsSeq;
  }

  private endedLogin(): null {
    this.signedOut();
    return null;
  }

  private async acknowledge(upToSeq: number) {
    try {
      return await api.acknowledge(upToSeq);
    } catch (err) {
      if (isUnauthorized(err)) this.signedOut();
      else this.notify(`The anomalies could not be acknowledged: ${messageOf(err)}`);
      return null;
    }
  }

  private selectWindow(w: StatsWindow, chosen: boolean): void {
    if (!STATS_WINDOW_NAMES.includes(w)) return;
    for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>('[data-window]'))) b.setAttribute('aria-pressed', String(b.dataset.window === w));
    this.navLink.href = `#live?window=${w}`;
    if (chosen) {
      try {
        localStorage.setItem(WINDOW_KEY, w);
      } catch {
        /* private mode: the address still holds it */
      }
      Screens.write(this.name, new URLSearchParams({ window: w }));
    }
    if (w === this.figures.window) return;
    this.figures.setWindow(w);
    this.drawFigures();
    if (this.signedIn) void this.loadStats();
  }

  private renderFigures = (): void => {
    this.counts.show(this.figures.counts());
    this.chart.draw(this.figures.series(), this.figures.range, this.figures.label);
    this.sessions.showCounters(this.figures.sessions);
    byId('window-note').textContent = this.figures.asOfSeq < 0 ? 'loading…' : `tool calls by their timestamps, ${this.figures.label} · times in ${zoneLabel()}`;
  };

  private drawFigures(): void {
    onNextFrame(this.renderFigures);
  }

  private scheduleStats(delayMs: number): void {
    window.clearTimeout(this.statsTimer);
    this.statsTimer = window.setTimeout(() => void this.loadStats(), delayMs);
  }

  /** Reads the window's figures and the anomaly acknowledgement; resolves to the seq the figures include, or null. */
  private async loadStats(): Promise<number | null> {
    window.clearTimeout(this.statsTimer);
    if (!this.signedIn) return null;
    const gen = ++this.statsGeneration;
    const window_ = this.figures.window;
    try {
      const [s, ack] = await Promise.all([api.stats(window_), api.acknowledgement()]);
      if (gen !== this.statsGeneration || window_ !== this.figures.window) return null;
      this.figures.load(s);
      this.anomalies.acknowledged(ack);
      this.anomalies.load(s.anomalies.map(anomalyFromStats), s.asOfSeq);
      this.drawFigures();
      if (s.total > 0) byId('getting-started').hidden = true;
      return s.asOfSeq;
    } catch (err) {
      if (gen !== this.statsGeneration) return null;
      if (isUnauthorized(err)) return this.endedLogin();
      this.notify(`The figures of the ${this.figures.label} could not be loaded: ${messageOf(err)}`);
      return null;
    } finally {
      if (gen === this.statsGeneration && this.signedIn) this.statsTimer = window.setTimeout(() => void this.loadStats(), STATS_REFRESH_MS);
    }
  }
}
