// The recognition screen of organization admins: records no profile read (by source and name, with a sample), the
// organization's own profiles (add as JSON, remove) and the built-in ones. Builds its own content inside #recognition-view.
import { api, ApiError, isOrgAdmin, isUnauthorized, type Me, type RecognitionProfile, type UnrecognizedRow } from './api.js';
import { byId, h, onSubmit, onRowButton } from './dom.js';
import type { Screen } from './screens.js';
import { cell } from './table.js';

const EXAMPLE = `{
  "id": "my-gateway",
  "when": "source == 'cloudwatch' && 'thing' in attributes",
  "fields": { "tool": "attributes.thing", "session": "attributes.sess" }
}`;

export class RecognitionView implements Screen {
  readonly name = 'recognition';
  readonly view = byId('recognition-view');
  readonly navLink = byId('nav-recognition');
  private readonly unrecognized = h('tbody', { id: 'recognition-unrecognized-body' });
  private readonly profiles = h('tbody', { id: 'recognition-profiles-body' });
  private readonly error = h('p', { class: 'login-error', role: 'alert', hidden: '' });
  private generation = 0;

  constructor(
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
  ) {
    const form = h(
      'form',
      { id: 'recognition-profile-form', class: 'key-form', novalidate: '' },
      h('label', { for: 'recognition-profile-json' }, 'Profile (JSON: id, when, fields; CEL expressions)'),
      h('textarea', { id: 'recognition-profile-json', class: 'wide', rows: '6', spellcheck: 'false', placeholder: EXAMPLE }),
      h('button', { type: 'submit', class: 'btn primary' }, 'Save profile'),
    );
    this.view.replaceChildren(
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'recognition-unrecognized-title' },
        h('div', { class: 'panel-head' }, h('h2', { id: 'recognition-unrecognized-title' }, 'Not recognized'), h('span', { class: 'hint' }, 'records no profile read and not stored as tool calls')),
        h('div', { class: 'scroll' }, h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, h('th', {}, 'Source'), h('th', {}, 'Name'), h('th', { class: 'num' }, 'Count'), h('th', {}, 'Sample'))), this.unrecognized)),
      ),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'recognition-profiles-title' },
        h('div', { class: 'panel-head' }, h('h2', { id: 'recognition-profiles-title' }, 'Profiles'), h('span', { class: 'hint' }, "yours first, in order, then the built-in ones · docs/normalization.md")),
        form,
        this.error,
        h('div', { class: 'scroll' }, h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, h('th', {}, 'Profile'), h('th', { class: 'num' }, 'Version'), h('th', {}, 'When'), h('th', {}, 'Source'), h('th', {}))), this.profiles)),
      ),
    );
    onSubmit(form, () => this.save());
    onRowButton(this.profiles, 'data-delete-profile', (button) => this.remove(button.dataset.deleteProfile as string));
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

  reset(): void {
    this.generation++;
    this.unrecognized.replaceChildren();
    this.profiles.replaceChildren();
  }

  async load(): Promise<void> {
    const gen = ++this.generation;
    try {
      const [report, profiles] = await Promise.all([api.recognition.unrecognized(), api.recognition.profiles()]);
      if (gen !== this.generation) return;
      this.renderUnrecognized(report.items);
      this.renderProfiles(profiles.items, profiles.builtin);
    } catch (err) {
      if (gen === this.generation) this.fail('Recognition could not be loaded', err);
    }
  }

  private renderUnrecognized(items: UnrecognizedRow[]): void {
    this.unrecognized.replaceChildren(
      ...items.map((r) =>
        h(
          'tr',
          {},
          cell('Source', {}, r.source),
          cell('Name', { class: 'id' }, h('code', {}, r.name)),
          cell('Count', { class: 'num' }, String(r.count)),
          cell('Sample', { class: 'id' }, h('code', { title: r.sample }, r.sample.length > 160 ? `${r.sample.slice(0, 160)}…` : r.sample)),
        ),
      ),
    );
    if (items.length === 0) this.unrecognized.replaceChildren(h('tr', {}, h('td', { colspan: '4', class: 'empty' }, 'Every record was recognized.')));
  }

  private renderProfiles(own: RecognitionProfile[], builtin: RecognitionProfile[]): void {
    const row = (p: RecognitionProfile, removable: boolean) =>
      h(
        'tr',
        { 'data-profile-id': p.id },
        cell('Profile', { class: 'id' }, h('code', { class: 'idv' }, p.id)),
        cell('Version', { class: 'num' }, String(p.version)),
        cell('When', { class: 'id' }, h('code', {}, p.when)),
        cell('Source', {}, removable ? p.source : `built-in · ${p.source}`),
        cell('', { class: 'op' }, removable ? h('button', { type: 'button', class: 'btn small danger', 'data-delete-profile': p.id, 'aria-label': `Remove profile ${p.id}` }, 'Remove') : ''),
      );
    this.profiles.replaceChildren(...own.map((p) => row(p, true)), ...builtin.map((p) => row(p, false)));
  }

  private setError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = !message;
  }

  private async save(): Promise<void> {
    const text = byId<HTMLTextAreaElement>('recognition-profile-json').value.trim();
    let profile: unknown;
    try {
      profile = JSON.parse(text);
    } catch {
      return this.setError('The profile is not valid JSON.');
    }
    this.setError('');
    try {
      await api.recognition.addProfile(profile);
      byId<HTMLTextAreaElement>('recognition-profile-json').value = '';
      await this.load();
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      this.setError(`The profile was not saved: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async remove(id: string): Promise<void> {
    try {
      await api.recognition.deleteProfile(id);
      await this.load();
    } catch (err) {
      this.fail('The profile was not removed', err);
    }
  }

  private fail(what: string, err: unknown): void {
    if (isUnauthorized(err)) return this.signedOut();
    this.notify(`${what}: ${err instanceof ApiError || err instanceof Error ? err.message : String(err)}`);
  }
}
