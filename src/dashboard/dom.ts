// Small DOM helpers for the dashboard: element creation, lookups, formatting and one requestAnimationFrame batch.

type Attrs = Record<string, string | number | boolean | null | undefined>;

/** Creates an element with attributes and text/element children; text always goes in as text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  el.append(...children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

/** The element with this id; a missing one is a bug in index.html, so it throws. */
export function byId<T extends Element = HTMLElement>(id: string): T {
  const el: Element | null = document.getElementById(id);
  if (!el) throw new Error(`dashboard: #${id} is missing from the page`);
  return el as T;
}

/** A value for display: null, undefined and '' become an em dash. */
export function show(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? '—' : String(value);
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

const isToday = (d: Date): boolean => d.toDateString() === new Date().toDateString();
const datePart = (d: Date): string => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;

/** Local time with milliseconds (HH:MM:SS.mmm), preceded by the date when it is not today; the raw text when not a date. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return isToday(d) ? time : `${datePart(d)} ${time}`;
}

/** Local date and time without milliseconds, the date only when not today, for values that may be days old. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return isToday(d) ? time : `${datePart(d)} ${time}`;
}

/** The browser's offset from UTC at `ms` as UTC±HH:MM. */
export function utcOffset(ms = Date.now()): string {
  const minutes = -new Date(ms).getTimezoneOffset();
  const sign = minutes < 0 ? '-' : '+';
  return `UTC${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** The browser's offset from UTC at `ms`, short, for column heads: UTC, UTC+1, UTC-5, UTC+5:30. */
export function shortUtcOffset(ms = Date.now()): string {
  const minutes = -new Date(ms).getTimezoneOffset();
  if (minutes === 0) return 'UTC';
  const abs = Math.abs(minutes);
  return `UTC${minutes < 0 ? '-' : '+'}${Math.floor(abs / 60)}${abs % 60 ? `:${pad(abs % 60)}` : ''}`;
}

/** The time zone times are shown in: its IANA name (when the browser tells) and its offset, e.g. "Europe/Paris, UTC+01:00". */
export function zoneLabel(ms = Date.now()): string {
  let name = '';
  try {
    name = Intl.DateTimeFormat().resolvedOptions().timeZone ?? '';
  } catch {
    name = '';
  }
  return name && name !== 'UTC' && name !== 'Etc/UTC' ? `${name}, ${utcOffset(ms)}` : utcOffset(ms);
}

/** Local date, time with milliseconds and zone offset: every part, for the detail panel. */
export function formatFull(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${datePart(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${utcOffset(d.getTime())}`;
}

/** The value of a datetime-local input for an epoch-ms time (local, to the minute). */
export function localInputValue(ms: number): string {
  const d = new Date(ms);
  return `${datePart(d)}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Local HH:MM of an epoch-ms time, with the month and day when not today (chart axes). */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return isToday(d) ? hm : `${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hm}`;
}

const frameTasks = new Set<() => void>();
let frameRequested = false;

/** Runs `task` once on the next animation frame, however often it is asked for before then. */
export function onNextFrame(task: () => void): void {
  frameTasks.add(task);
  if (frameRequested) return;
  frameRequested = true;
  window.requestAnimationFrame(() => {
    frameRequested = false;
    const tasks = [...frameTasks];
    frameTasks.clear();
    for (const t of tasks) t();
  });
}

/** Runs `task` when `form` is submitted, in place of the browser's navigation. */
export function onSubmit(form: HTMLFormElement, task: () => unknown): void {
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void task();
  });
}

/** Runs `task` with the button clicked inside `container` that carries the data attribute `attr` (one listener for all its rows). */
export function onRowButton(container: Element, attr: string, task: (button: HTMLButtonElement) => unknown): void {
  container.addEventListener('click', (ev) => {
    const button = (ev.target as Element).closest<HTMLButtonElement>(`button[${attr}]`);
    if (button) void task(button);
  });
}
