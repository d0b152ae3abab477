// The calls-per-bucket chart of the chosen window: SVG bars, a y scale that a burst does not flatten, and a time axis of local clock times.
import type { BucketRange } from '../audit/stats-windows.js';
import { chartScale } from './chart-scale.js';
import { formatClock, h, svg } from './dom.js';

const WIDTH = 600;
const HEIGHT = 120;

/** Tick spacing for the axis: every 15 minutes in an hour, every 4 hours in a day (local clock). */
const tickMinutes = (spanMinutes: number): number => (spanMinutes <= 60 ? 15 : 240);

export class RateChart {
  constructor(
    private readonly chart: SVGSVGElement,
    private readonly axis: HTMLElement,
    private readonly scale: HTMLElement,
    private readonly summary: HTMLElement,
    private readonly title: HTMLElement,
    private readonly burstLabels: HTMLElement,
  ) {
    chart.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
    chart.setAttribute('preserveAspectRatio', 'none');
  }

  draw(series: number[], range: BucketRange, windowLabel: string): void {
    const unit = range.bucketSeconds === 60 ? 'minute' : `${range.bucketSeconds / 60} min`;
    this.title.textContent = range.bucketSeconds === 60 ? 'Tool calls per minute' : `Tool calls per ${unit}`;
    const peak = Math.max(0, ...series);
    const { top, clipped } = chartScale(series);
    const barW = WIDTH / series.length;
    const bucketMs = range.bucketSeconds * 1000;
    const startMs = range.first * bucketMs;
    const nodes: SVGElement[] = [
      svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2 }),
      svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: 0.5, y2: 0.5 }),
    ];
    series.forEach((n, i) => {
      const over = n > top;
      const hgt = (Math.min(n, top) / top) * (HEIGHT - 2);
      const bar = svg('rect', { class: over ? 'bar clipped' : 'bar', x: i * barW + 0.5, width: Math.max(0.5, barW - 1), y: HEIGHT - hgt, height: hgt, 'data-count': n });
      const title = svg('title');
      title.textContent = `${formatClock(startMs + i * bucketMs)}: ${n} calls`;
      bar.append(title);
      nodes.push(bar);
    });
    this.chart.replaceChildren(...nodes);
    // A clipped bar's value, written over the chart at its place (HTML, so the text is not stretched with the SVG).
    this.burstLabels.replaceChildren(
      ...clipped.map((i) => {
        const label = h('span', { class: 'burst-label', 'data-count': series[i] }, `▲ ${series[i].toLocaleString('en-US')}`);
        label.style.left = `${((i + 0.5) / series.length) * 100}%`;
        return label;
      }),
    );
    this.chart.dataset.total = String(series.reduce((a, b) => a + b, 0));
    this.chart.dataset.peak = String(peak);
    this.chart.dataset.buckets = String(series.length);
    this.chart.dataset.top = String(top);
    this.scale.textContent = clipped.length
      ? `scale 0–${top} per ${unit} · ${clipped.length} burst bucket${clipped.length > 1 ? 's' : ''} clipped (peak ${peak.toLocaleString('en-US')})`
      : `scale 0–${top} per ${unit}`;

    // Axis labels at local clock times that are whole multiples of the tick, placed in percent of the width.
    const spanMs = series.length * bucketMs;
    const tickMs = tickMinutes(spanMs / 60_000) * 60_000;
    const offset = new Date(startMs).getTimezoneOffset() * 60_000;
    const labels: HTMLElement[] = [];
    for (let t = Math.ceil((startMs - offset) / tickMs) * tickMs + offset; t <= startMs + spanMs; t += tickMs) {
      const pct = ((t - startMs) / spanMs) * 100;
      const label = h('span', { class: 'tick', 'data-time': new Date(t).toISOString() }, formatClock(t));
      label.style.left = `${pct}%`;
      if (pct > 92) label.classList.add('tick-end');
      else if (pct < 8) label.classList.add('tick-start');
      labels.push(label);
    }
    this.axis.replaceChildren(...labels);

    const total = series.reduce((a, b) => a + b, 0);
    const peakAt = series.indexOf(peak);
    this.summary.textContent =
      total === 0
        ? `No tool calls in the ${windowLabel}.`
        : `${total.toLocaleString('en-US')} calls in the ${windowLabel} · peak ${peak.toLocaleString('en-US')} per ${unit} at ${formatClock(startMs + peakAt * bucketMs)} · now ${series[series.length - 1]}`;
  }
}
