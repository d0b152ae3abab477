// Live calls-per-second chart of the last 60 seconds, drawn as SVG bars by arrival time.
import { onNextFrame, svg } from './dom.js';

const WINDOW_S = 60;
const WIDTH = 600;
const HEIGHT = 120;
const BAR_W = WIDTH / WINDOW_S;

/** The smallest of 1, 2, 5, 10, 20, 50... that is at least n. */
function niceCeil(n: number): number {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (step * m >= n) return step * m;
    step *= 10;
  }
}

export class RateChart {
  /** Calls per epoch second; only the last WINDOW_S seconds are kept. */
  private readonly perSecond = new Map<number, number>();
  private readonly bars: SVGRectElement[] = [];
  private readonly scaleLabel: SVGTextElement;
  private readonly render = (): void => this.draw();

  constructor(
    private readonly chart: SVGSVGElement,
    private readonly summary: HTMLElement,
  ) {
    chart.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
    chart.setAttribute('preserveAspectRatio', 'none');
    chart.append(
      svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2 }),
      svg('line', { class: 'grid', x1: 0, x2: WIDTH, y1: 0.5, y2: 0.5 }),
    );
    for (let i = 0; i < WINDOW_S; i++) {
      const bar = svg('rect', { class: 'bar', x: i * BAR_W + 1, width: BAR_W - 2, y: HEIGHT, height: 0 });
      this.bars.push(bar);
      chart.append(bar);
    }
    this.scaleLabel = svg('text', { class: 'scale', x: 4, y: 12 });
    chart.append(this.scaleLabel);
    window.setInterval(this.render, 1000);
    this.draw();
  }

  /** Counts one call arriving now. */
  record(atMs = Date.now()): void {
    const sec = Math.floor(atMs / 1000);
    this.perSecond.set(sec, (this.perSecond.get(sec) ?? 0) + 1);
    onNextFrame(this.render);
  }

  reset(): void {
    this.perSecond.clear();
    onNextFrame(this.render);
  }

  private draw(): void {
    const now = Math.floor(Date.now() / 1000);
    const first = now - WINDOW_S + 1;
    for (const sec of this.perSecond.keys()) if (sec < first) this.perSecond.delete(sec);
    const counts = this.bars.map((_, i) => this.perSecond.get(first + i) ?? 0);
    const peak = Math.max(0, ...counts);
    const scale = niceCeil(Math.max(1, peak));
    counts.forEach((n, i) => {
      const hgt = (n / scale) * (HEIGHT - 2);
      const bar = this.bars[i];
      bar.setAttribute('y', String(HEIGHT - hgt));
      bar.setAttribute('height', String(hgt));
    });
    const total = counts.reduce((a, b) => a + b, 0);
    this.scaleLabel.textContent = `${scale}/s`;
    this.chart.dataset.total = String(total);
    this.chart.dataset.peak = String(peak);
    const lastFull = counts[WINDOW_S - 2];
    this.summary.textContent = `${lastFull}/s last second · ${(total / WINDOW_S).toFixed(1)}/s average · peak ${peak}/s · ${total} calls in 60 s`;
  }
}
