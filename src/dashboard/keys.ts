// The API key screen of organization admins: list (prefix, name, scopes, created, last used), create (shown once), revoke.
import { api, ApiError, isOrgAdmin, isUnauthorized, type ApiKey, type Me } from './api.js';
import { byId, formatDateTime, h, onSubmit, onRowButton } from './dom.js';
import { copyFrom } from './ids.js';
import type { Screen } from './screens.js';
import { cell } from './table.js';

const CONFIRM_MS = 5000;

export class KeysView implements Screen {
  readonly name = 'keys';
  readonly view = byId('keys-view');
  readonly navLink = byId('nav-keys');
  private readonly form = byId<HTMLFormElement>('key-form');
  private readonly keyName = byId<HTMLInputElement>('key-name');
  private readonly error = byId('key-error');
  private readonly tbody = byId<HTMLTableSectionElement>('keys-body');
  private readonly empty = byId('keys-empty');
  private readonly newKey = byId('new-key');
  private readonly newKeyValue = byId('new-key-value');
  private generation = 0;

  constructor(
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
  ) {
    onSubmit(this.form, () => this.create());
    const copy = byId('new-key-copy');
    copy.addEventListener('click', () => void copyFrom(copy, this.newKeyValue.textContent ?? ''));
    byId('new-key-done').addEventListener('click', () => this.hideNewKey());
    onRowButton(this.tbody, 'data-revoke', (button) => this.revoke(button));
  }

  /** Organization admins only. */
  available(me: Me): boolean {
    return isOrgAdmin(me);
  }

  show(): void {
    void this.load();
  }

  hide(): void {
    this.reset();
  }

  async load(): Promise<void> {
    const gen = ++this.generation;
    this.empty.hidden = false;
    this.empty.textContent = 'Loading…';
    try {
      const { items } = await api.apiKeys();
      if (gen === this.generation) this.render(items);
    } catch (err) {
      if (gen !== this.generation) return;
      this.empty.hidden = true;
      this.fail('The keys could not be loaded', err);
    }
  }

  /** Forgets the shown key and the list (leaving the screen, signing out). */
  reset(): void {
    this.generation++;
    this.hideNewKey();
    this.tbody.replaceChildren();
    this.empty.hidden = true;
  }

  private render(items: ApiKey[]): void {
    const sorted = [...items].sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.createdAt.localeCompare(a.createdAt));
    this.tbody.replaceChildren(
      ...sorted.map((k) =>
        h(
          'tr',
          { 'data-key-id': k.id, 'data-state': k.revokedAt ? 'revoked' : 'active' },
          cell('Name', { class: 'key-name' }, k.name),
          cell('Prefix', { class: 'id' }, h('code', { class: 'idv' }, `${k.prefix}…`)),
          cell('Scopes', { class: 'scopes-cell' }, ...k.scopes.map((s) => h('span', { class: 'scope' }, s))),
          cell('Created', { class: 'time', title: k.createdAt }, formatDateTime(k.createdAt)),
          cell('Last used', { class: 'time', title: k.lastUsedAt ?? '' }, k.lastUsedAt ? formatDateTime(k.lastUsedAt) : 'never'),
          cell(
            '',
            { class: 'op' },
            k.revokedAt
              ? h('span', { class: 'status status-suspended', title: k.revokedAt }, 'revoked')
              : h('button', { type: 'button', class: 'btn small danger', 'data-revoke': k.id, 'aria-label': `Revoke key ${k.name}` }, 'Revoke'),
          ),
        ),
      ),
    );
    this.empty.textContent = 'No API keys yet.';
    this.empty.hidden = items.length > 0;
  }

  private async create(): Promise<void> {
    const name = this.keyName.value.trim();
    const scopes = Array.from(this.form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')).map((i) => i.value);
    if (!name) return this.setError('Give the key a name.');
    if (scopes.length === 0) return this.setError('Choose at least one scope.');
    this.setError('');
    const submit = this.form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (submit) submit.disabled = true;
    try {
      const created = await api.createApiKey(name, scopes);
      byId('new-key-name').textContent = created.name;
      this.newKeyValue.textContent = created.key;
      this.newKey.hidden = false;
      this.keyName.value = '';
      await this.load();
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      this.setError(`The key was not created: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (submit) submit.disabled = false;
    }
  }

  /** First click arms the button ("Confirm revoke"), a second within 5 s revokes. */
  private async revoke(button: HTMLButtonElement): Promise<void> {
    const id = button.dataset.revoke as string;
    if (button.dataset.armed !== 'yes') {
      button.dataset.armed = 'yes';
      button.textContent = 'Confirm revoke';
      window.setTimeout(() => {
        if (button.isConnected && button.dataset.armed === 'yes') {
          delete button.dataset.armed;
          button.textContent = 'Revoke';
        }
      }, CONFIRM_MS);
      return;
    }
    button.disabled = true;
    try {
      await api.revokeApiKey(id);
      await this.load();
    } catch (err) {
      button.disabled = false;
      this.fail('The key was not revoked', err);
    }
  }

  private hideNewKey(): void {
    this.newKey.hidden = true;
    this.newKeyValue.textContent = '';
  }

  private fail(what: string, err: unknown): void {
    if (isUnauthorized(err)) return this.signedOut();
    this.notify(`${what}: ${err instanceof ApiError || err instanceof Error ? err.message : String(err)}`);
  }

  private setError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}
