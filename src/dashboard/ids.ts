// Identifiers on the page: shortened to one line (the whole id on hover, in the copy and in the detail panel); copied on click; session ids also open that session.
import { h } from './dom.js';

/** Ids longer than this are shown as their start, an ellipsis and their end. */
const SHORT_MAX = 16;

/** The id as shown in a row: whole when short, else its first 9 and last 5 characters around an ellipsis (15 in all). */
export function shortId(value: string): string {
  return value.length <= SHORT_MAX ? value : `${value.slice(0, 9)}…${value.slice(-5)}`;
}

/** A server (or other) id: one line, the whole value on hover, copied to the clipboard when clicked. */
export function copyableId(value: string | null): Node {
  if (value === null || value === '') return document.createTextNode('—');
  return h('button', { type: 'button', class: 'idv copyable', 'data-copy': value, title: `${value}\n(click to copy)` }, shortId(value));
}

/** A session id: one line that opens the session (status, actions, calls); the small button beside it copies it. */
export function sessionId(value: string | null): Node {
  if (value === null || value === '') return document.createTextNode('—');
  return h(
    'span',
    { class: 'idwrap' },
    h('button', { type: 'button', class: 'idv link', 'data-session': value, title: `${value}\n(open this session)` }, shortId(value)),
    h('button', { type: 'button', class: 'copy-btn', 'data-copy': value, title: 'Copy the session id', 'aria-label': `Copy session id ${value}` }, 'copy'),
  );
}

async function writeClipboard(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below */
  }
  // Plain http on another host than localhost has no Clipboard API: select a hidden field and copy it.
  const area = h('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** Copies `text` and marks `button` as copied for a moment (data-copied="yes" or "no"). */
export async function copyFrom(button: HTMLElement, text: string): Promise<void> {
  const ok = await writeClipboard(text);
  button.dataset.copied = ok ? 'yes' : 'no';
  window.setTimeout(() => delete button.dataset.copied, 1500);
}

/** One listener for every [data-copy] element of the page, present and future. */
export function installCopyOnClick(root: Document = document): void {
  root.addEventListener('click', (ev) => {
    const el = (ev.target as Element | null)?.closest<HTMLElement>('[data-copy]');
    if (el?.dataset.copy !== undefined) void copyFrom(el, el.dataset.copy);
  });
}
