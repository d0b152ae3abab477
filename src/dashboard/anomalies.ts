// The anomaly list at the top of the dashboard: the window's anomalies from the server plus live ones, newest first, capped; acknowledged ones (kept on the server) hidden.
import { formatTime, h, show } from './dom.js';
import { copyableId } from './ids.js';
import type { AnomalyAcknowledgement, StatsSnapshot } from './api.js';
import type { AnomalyEvent } from './stream.js';

const formatNumber = (n: number | null): string => (n === null ? '—' : String(Number(n.toFixed(2))));

/** An anomaly as listed by GET /api/v1/audit-events/stats ({seq, ...its stream payload}). */
export function anomalyFromStats(a: StatsSnapshot['anomalies'][number]): AnomalyEvent {
  const { type: _type, ...fields } = a;
  return fields;
}

export class AnomalyList {
  /** Shown anomalies by seq (the snapshot's and the live ones). */
  private readonly items = new Map<number, AnomalyEvent>();
  /** Live anomalies newer than the last snapshot, to put back on top of the next one. */
  private live: AnomalyEvent[] = [];
  /** Anomalies up to this seq were acknowledged (for the whole organization, on the server) and stay hidden. */
  private clearedUpTo = 0;

  constructor(
    private readonly section: HTMLElement,
    private readonly list: HTMLUListElement,
    private readonly emptyNote: HTMLElement,
    private readonly counter: HTMLElement,
    private readonly clearButton: HTMLButtonElement,
    private readonly ackNote: HTMLElement,
    /** Acknowledges the anomalies up to a seq on the server; resolves with the organization's acknowledgement. */
    acknowledge: (upToSeq: number) => Promise<AnomalyAcknowledgement | null>,
    private readonly cap = 50,
  ) {
    clearButton.addEventListener('click', async () => {
      clearButton.disabled = true;
      try {
        const ack = await acknowledge(Math.max(this.clearedUpTo, ...this.items.keys()));
        if (ack) this.acknowledged(ack);
      } finally {
        clearButton.disabled = false;
      }
    });
    this.render();
  }

  /** The organization's acknowledgement: anomalies up to its seq are hidden, and who acknowledged them is said. */
  acknowledged(ack: AnomalyAcknowledgement): void {
    if (ack.upToSeq < this.clearedUpTo) return;
    this.clearedUpTo = ack.upToSeq;
    for (const seq of [...this.items.keys()]) if (seq <= ack.upToSeq) this.items.delete(seq);
    this.ackNote.textContent = ack.acknowledgedBy ? `acknowledged up to event ${ack.upToSeq} by ${ack.acknowledgedBy.replace(/^user:/, '')} at ${formatTime(ack.acknowledgedAt)}` : '';
    this.render();
  }

  /** The window's anomalies as of `asOfSeq`, with the live ones that came after it. */
  load(fromServer: AnomalyEvent[], asOfSeq: number): void {
    this.items.clear();
    this.live = this.live.filter((a) => a.seq > asOfSeq);
    for (const a of [...fromServer, ...this.live]) if (a.seq > this.clearedUpTo) this.items.set(a.seq, a);
    this.render();
  }

  add(a: AnomalyEvent): void {
    this.live.push(a);
    if (this.live.length > this.cap) this.live.shift();
    if (a.seq > this.clearedUpTo) this.items.set(a.seq, a);
    this.render();
  }

  /** Forgets everything (sign-out, organization switch). */
  reset(): void {
    this.items.clear();
    this.live = [];
    this.clearedUpTo = 0;
    this.ackNote.textContent = '';
    this.render();
  }

  private render(): void {
    const shown = [...this.items.values()].sort((a, b) => b.seq - a.seq).slice(0, this.cap);
    this.list.replaceChildren(
      ...shown.map((a) =>
        h(
          'li',
          { 'data-seq': a.seq, class: 'anomaly' },
          h('span', { class: 'anomaly-type' }, show(a.anomalyType)),
          h('span', { class: 'anomaly-field' }, 'server ', copyableId(a.serverId)),
          h('span', { class: 'anomaly-field' }, 'tool ', h('b', {}, show(a.toolName))),
          h('span', { class: 'anomaly-field' }, 'rate ', h('b', {}, formatNumber(a.currentRate)), ` vs threshold ${formatNumber(a.threshold)} /min`),
          h('time', { class: 'anomaly-time', datetime: a.timestamp ?? '', title: a.timestamp ?? '' }, formatTime(a.timestamp)),
        ),
      ),
    );
    const any = shown.length > 0;
    this.section.classList.toggle('alerting', any);
    this.emptyNote.hidden = any;
    this.counter.textContent = String(this.items.size);
  }
}
