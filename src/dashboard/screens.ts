// The dashboard's screens and the hash that names one (#live, #explore?serverId=..., #keys): a new screen is a module implementing Screen plus one register() call.
import type { Me } from './api.js';

export interface Screen {
  /** Its name in the hash: #<name>?<params>. */
  readonly name: string;
  /** The element shown while it is the current screen, and its link in the top bar. */
  readonly view: HTMLElement;
  readonly navLink: HTMLElement;
  /** Whether `me` may see it (the others fall back to the first registered screen). */
  available(me: Me): boolean;
  /** Made current, or its parameters changed (the address bar, a link, back/forward). */
  show(params: URLSearchParams): void;
  /** Another screen became current. */
  hide(): void;
  /** Forget everything shown: sign-out or another organization. */
  reset(): void;
}

export function parseHash(hash: string): { name: string; params: URLSearchParams } {
  const text = hash.replace(/^#/, '');
  const i = text.indexOf('?');
  return i < 0 ? { name: text, params: new URLSearchParams() } : { name: text.slice(0, i), params: new URLSearchParams(text.slice(i + 1)) };
}

export class Screens {
  private readonly list: Screen[] = [];
  private current: Screen | null = null;

  register(screen: Screen): void {
    this.list.push(screen);
  }

  /** Shows the screen the hash names (or the first one) to `me`; hides the others and the links `me` may not use. */
  route(me: Me): void {
    const { name, params } = parseHash(location.hash);
    for (const s of this.list) s.navLink.hidden = !s.available(me);
    const target = this.list.find((s) => s.name === name && s.available(me)) ?? this.list[0];
    if (this.current && this.current !== target) this.current.hide();
    for (const s of this.list) {
      s.view.hidden = s !== target;
      s.navLink.toggleAttribute('aria-current', s === target);
    }
    this.current = target;
    target.show(params);
  }

  /** Writes the current screen's parameters into the address bar, as a new history entry or in place of the current one. */
  static write(name: string, params: URLSearchParams, mode: 'push' | 'replace' = 'replace'): void {
    const text = params.toString();
    const hash = `#${name}${text ? `?${text}` : ''}`;
    if (hash === location.hash) return;
    if (mode === 'push') history.pushState(null, '', hash);
    else history.replaceState(null, '', hash);
  }

  resetAll(): void {
    for (const s of this.list) s.reset();
  }

  hideAll(): void {
    this.current?.hide();
    this.current = null;
    for (const s of this.list) s.view.hidden = true;
  }

  get currentName(): string | null {
    return this.current?.name ?? null;
  }
}
