// The anomaly list at the top of the dashboard: newest first, capped, highlighted while it holds anything.
import { formatTime, h, show } from './dom.js';
import type { AnomalyEvent } from './stream.js';

const formatNumber = (n: number | null): string => (n === null ? '—' : String(Number(n.toFixed(2))));

export class AnomalyList {
  private total = 0;

  constructor(
    private readonly section: HTMLElement,
    private readonly list: HTMLUListElement,
    private readonly emptyNote: HTMLElement,
    private readonly counter: HTMLElement,
    clearButton: HTMLButtonElement,
    private readonly cap = 50,
  ) {
    clearButton.addEventListener('click', () => this.clear());
    this.update();
  }

  add(a: AnomalyEvent): void {
    const li = h(
      'li',
      { 'data-seq': a.seq, class: 'anomaly' },
      h('span', { class: 'anomaly-type' }, show(a.anomalyType)),
      h('span', { class: 'anomaly-field' }, 'server ', h('b', {}, show(a.serverId))),
      h('span', { class: 'anomaly-field' }, 'tool ', h('b', {}, show(a.toolName))),
      h('span', { class: 'anomaly-field' }, 'rate ', h('b', {}, formatNumber(a.currentRate)), ` vs threshold ${formatNumber(a.threshold)}`),
      h('time', { class: 'anomaly-time', datetime: a.timestamp ?? '', title: a.timestamp ?? '' }, formatTime(a.timestamp)),
    );
    this.list.prepend(li);
    while (this.list.children.length > this.cap) this.list.lastElementChild?.remove();
    this.total++;
    this.update();
  }

  clear(): void {
    this.list.replaceChildren();
    this.total = 0;
    this.update();
  }

  private update(): void {
    const any = this.total > 0;
    this.section.classList.toggle('alerting', any);
    this.emptyNote.hidden = any;
    this.counter.textContent = String(this.total);
  }
}
