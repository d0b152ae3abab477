// The live SSE connection to /api/v1/events: parses events, drops replayed duplicates by seq, reconnects and reports its state.
import type { AnomalyPayload, SessionUpdatePayload, StreamPayload, ToolCallPayload } from '../contract/stream-payloads.js';
import { api, isUnauthorized, type Me } from './api.js';

export type ConnectionState = 'live' | 'reconnecting' | 'signed out';

/** A streamed event as the page keeps it: the server's payload (src/contract) and the event's seq. */
export type ToolCallEvent = Omit<ToolCallPayload, 'type'> & { seq: number };
export type AnomalyEvent = Omit<AnomalyPayload, 'type'> & { seq: number };
export type SessionUpdateEvent = Omit<SessionUpdatePayload, 'type'> & { seq: number };

export interface StreamHandlers {
  toolCall(e: ToolCallEvent): void;
  anomaly(e: AnomalyEvent): void;
  sessionUpdate(e: SessionUpdateEvent): void;
  state(s: ConnectionState): void;
  /** The stream was refused and /auth/me answered 401. */
  signedOut(): void;
  /** /auth/me answered while recovering, so the page can notice an organization switched in another tab. */
  identity(me: Me): void;
}

const MIN_RETRY_MS = 1000;
const MAX_RETRY_MS = 15_000;

export class LiveStream {
  private source: EventSource | null = null;
  private lastSeq = 0;
  private retryDelay = MIN_RETRY_MS;
  private retryTimer = 0;
  /** Bumped on every start/stop so callbacks of an older connection do nothing. */
  private generation = 0;
  private warnedNoId = false;

  constructor(private readonly on: StreamHandlers) {}

  /** (Re)connects from scratch; events with seq <= afterSeq are already shown and are replayed from after it. */
  start(afterSeq = 0): void {
    this.stop();
    this.lastSeq = afterSeq;
    this.retryDelay = MIN_RETRY_MS;
    this.open();
  }

  stop(): void {
    this.generation++;
    window.clearTimeout(this.retryTimer);
    this.source?.close();
    this.source = null;
  }

  private open(): void {
    const gen = this.generation;
    // The browser sends Last-Event-ID on its own reconnects; a new EventSource can only say it in the query.
    const url = this.lastSeq > 0 ? `/api/v1/events?lastEventId=${this.lastSeq}` : '/api/v1/events';
    const es = new EventSource(url, { withCredentials: true });
    this.source = es;
    this.on.state('reconnecting');
    es.addEventListener('open', () => {
      if (gen !== this.generation) return;
      this.retryDelay = MIN_RETRY_MS;
      this.on.state('live');
    });
    es.addEventListener('error', () => this.onError(es, gen));
    for (const name of ['tool_call', 'anomaly', 'session_update'] as const) {
      es.addEventListener(name, (ev) => {
        const d = this.accept(ev, gen);
        if (!d) return;
        const { type: _type, ...fields } = d.data;
        if (d.data.type === 'tool_call') this.on.toolCall({ ...(fields as Omit<ToolCallPayload, 'type'>), seq: d.seq });
        else if (d.data.type === 'anomaly') this.on.anomaly({ ...(fields as Omit<AnomalyPayload, 'type'>), seq: d.seq });
        else this.on.sessionUpdate({ ...(fields as Omit<SessionUpdatePayload, 'type'>), seq: d.seq });
      });
    }
  }

  /** The event's seq and payload when it is new; null for replayed duplicates, stale connections and bad data. */
  private accept(ev: MessageEvent, gen: number): { seq: number; data: StreamPayload } | null {
    if (gen !== this.generation) return null;
    const seq = ev.lastEventId === '' ? NaN : Number(ev.lastEventId);
    if (!Number.isSafeInteger(seq)) {
      if (!this.warnedNoId) console.warn('dashboard: ignoring stream events without a numeric id');
      this.warnedNoId = true;
      return null;
    }
    if (seq <= this.lastSeq) return null;
    this.lastSeq = seq;
    try {
      const data = JSON.parse(String(ev.data)) as StreamPayload | null;
      // The payload names its own type, which is the event's name.
      return data !== null && typeof data === 'object' && data.type === ev.type ? { seq, data } : null;
    } catch {
      console.warn(`dashboard: event ${seq} has data that is not JSON`);
      return null;
    }
  }

  private onError(es: EventSource, gen: number): void {
    if (gen !== this.generation) return;
    if (es.readyState !== EventSource.CLOSED) {
      // CONNECTING: the browser retries by itself and resumes with Last-Event-ID.
      this.on.state('reconnecting');
      return;
    }
    // CLOSED: the server refused the stream (401, 403, 429, 5xx...). Signed out, or retry later ourselves.
    es.close();
    this.source = null;
    this.on.state('reconnecting');
    api.me().then(
      (me) => {
        if (gen !== this.generation) return;
        this.on.identity(me);
        this.reopenLater(gen);
      },
      (err: unknown) => {
        if (gen !== this.generation) return;
        if (isUnauthorized(err)) {
          this.stop();
          this.on.state('signed out');
          this.on.signedOut();
        } else {
          this.reopenLater(gen);
        }
      },
    );
  }

  private reopenLater(gen: number): void {
    if (gen !== this.generation) return;
    window.clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => {
      if (gen === this.generation) this.open();
    }, this.retryDelay);
    this.retryDelay = Math.min(this.retryDelay * 2, MAX_RETRY_MS);
  }
}
