// The MCP proxy screen of organization admins: the upstream servers (endpoint, headers, secrets hidden), the ordered
// policy rules (add, remove) and a dry run of a described call. Builds its own content inside #proxy-view.
import { api, ApiError, isOrgAdmin, isUnauthorized, type Me, type ProxyRule, type ProxyServer } from './api.js';
import { byId, h, onSubmit, onRowButton } from './dom.js';
import type { Screen } from './screens.js';
import { cell } from './table.js';

const ACTIONS = ['deny', 'flag', 'redact', 'allow'] as const;

export class ProxyView implements Screen {
  readonly name = 'proxy';
  readonly view = byId('proxy-view');
  readonly navLink = byId('nav-proxy');
  private readonly root = this.view;
  private readonly servers = h('tbody', { id: 'proxy-servers-body' });
  private readonly rules = h('tbody', { id: 'proxy-rules-body' });
  private readonly error = h('p', { class: 'login-error', role: 'alert', hidden: '' });
  private readonly serverError = h('p', { class: 'login-error', role: 'alert', hidden: '' });
  private readonly verdict = h('pre', { id: 'proxy-dry-run-result', class: 'dry-run' });
  private generation = 0;

  constructor(
    private readonly notify: (message: string) => void,
    private readonly signedOut: () => void,
  ) {
    const serverForm = h(
      'form',
      { id: 'proxy-server-form', class: 'key-form', novalidate: '' },
      h('label', { for: 'proxy-server-id' }, 'Server id'),
      h('input', { id: 'proxy-server-id', maxlength: '100', placeholder: 'e.g. github', required: '' }),
      h('label', { for: 'proxy-server-url' }, 'Upstream URL'),
      h('input', { id: 'proxy-server-url', class: 'wide', placeholder: 'https://mcp.example.com/mcp', required: '' }),
      h('label', { for: 'proxy-server-header' }, 'Secret header'),
      h('input', { id: 'proxy-server-header', maxlength: '100', placeholder: 'Authorization' }),
      h('label', { for: 'proxy-server-secret' }, 'Value'),
      h('input', { id: 'proxy-server-secret', type: 'password', autocomplete: 'off', placeholder: 'write-only' }),
      h('button', { type: 'submit', class: 'btn primary' }, 'Save server'),
    );
    const ruleForm = h(
      'form',
      { id: 'proxy-rule-form', class: 'key-form', novalidate: '' },
      h('label', { for: 'proxy-rule-name' }, 'Name'),
      h('input', { id: 'proxy-rule-name', maxlength: '200', placeholder: 'e.g. no system files', required: '' }),
      h('label', { for: 'proxy-rule-condition' }, 'CEL condition'),
      h('input', { id: 'proxy-rule-condition', class: 'wide', placeholder: 'has(args.path) && args.path.startsWith("/etc/")', required: '' }),
      h('label', { for: 'proxy-rule-action' }, 'Action'),
      h('select', { id: 'proxy-rule-action' }, ...ACTIONS.map((a) => h('option', { value: a }, a))),
      h('label', { for: 'proxy-rule-reason' }, 'Reason'),
      h('input', { id: 'proxy-rule-reason', maxlength: '500', placeholder: 'shown to the agent when denied' }),
      h('button', { type: 'submit', class: 'btn primary' }, 'Add rule'),
    );
    const dryForm = h(
      'form',
      { id: 'proxy-dry-run-form', class: 'key-form', novalidate: '' },
      h('label', { for: 'proxy-dry-server' }, 'Server'),
      h('input', { id: 'proxy-dry-server', placeholder: 'server id' }),
      h('label', { for: 'proxy-dry-tool' }, 'Tool'),
      h('input', { id: 'proxy-dry-tool', placeholder: 'tool name', required: '' }),
      h('label', { for: 'proxy-dry-args' }, 'Arguments (JSON)'),
      h('input', { id: 'proxy-dry-args', class: 'wide', placeholder: '{"path":"/etc/shadow"}' }),
      h('button', { type: 'submit', class: 'btn' }, 'Dry run'),
    );
    this.root.replaceChildren(
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'proxy-servers-title' },
        h('div', { class: 'panel-head' }, h('h2', { id: 'proxy-servers-title' }, 'MCP servers'), h('span', { class: 'hint' }, 'agents connect to the endpoint with a key that has mcp:call')),
        serverForm,
        this.serverError,
        h('div', { class: 'scroll' }, h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, h('th', {}, 'Server'), h('th', {}, 'Endpoint'), h('th', {}, 'Upstream'), h('th', {}, 'Headers'), h('th', { class: 'num' }, 'Timeout'), h('th', {}))), this.servers)),
      ),
      h(
        'section',
        { class: 'panel', 'aria-labelledby': 'proxy-rules-title' },
        h('div', { class: 'panel-head' }, h('h2', { id: 'proxy-rules-title' }, 'Policy rules'), h('span', { class: 'hint' }, 'first match wins · no match: allow')),
        ruleForm,
        this.error,
        h('div', { class: 'scroll' }, h('table', { class: 'grid-table' }, h('thead', {}, h('tr', {}, h('th', { class: 'num' }, '#'), h('th', {}, 'Name'), h('th', {}, 'Condition'), h('th', {}, 'Action'), h('th', {}, 'Reason'), h('th', {}))), this.rules)),
      ),
      h('section', { class: 'panel', 'aria-labelledby': 'proxy-dry-title' }, h('div', { class: 'panel-head' }, h('h2', { id: 'proxy-dry-title' }, 'Dry run')), dryForm, this.verdict),
    );
    onSubmit(serverForm, () => this.saveServer());
    onRowButton(this.servers, 'data-delete-server', (button) => this.deleteServer(button.dataset.deleteServer as string));
    onSubmit(ruleForm, () => this.addRule());
    onSubmit(dryForm, () => this.dryRun());
    onRowButton(this.rules, 'data-delete-rule', (button) => this.deleteRule(button.dataset.deleteRule as string));
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
    try {
      const [servers, rules] = await Promise.all([api.proxy.servers(), api.proxy.rules()]);
      if (gen !== this.generation) return;
      this.renderServers(servers.items);
      this.renderRules(rules.items);
    } catch (err) {
      if (gen === this.generation) this.fail('The proxy configuration could not be loaded', err);
    }
  }

  reset(): void {
    this.generation++;
    this.servers.replaceChildren();
    this.rules.replaceChildren();
    this.verdict.textContent = '';
  }

  private renderServers(items: ProxyServer[]): void {
    this.servers.replaceChildren(
      ...items.map((s) =>
        h(
          'tr',
          { 'data-server-id': s.serverId },
          cell('Server', { class: 'id' }, h('code', { class: 'idv' }, s.serverId)),
          cell('Endpoint', { class: 'id' }, h('code', { class: 'idv' }, `${location.origin}${s.endpoint}`)),
          cell('Upstream', {}, s.url),
          cell('Headers', {}, s.headers.map((x) => (x.secret ? `${x.name}: ••••` : `${x.name}: ${x.value}`)).join(', ') || '—'),
          cell('Timeout', { class: 'num' }, `${s.timeoutMs / 1000} s`),
          cell('', { class: 'op' }, h('button', { type: 'button', class: 'btn small danger', 'data-delete-server': s.serverId, 'aria-label': `Remove server ${s.serverId}` }, 'Remove')),
        ),
      ),
    );
    if (items.length === 0) this.servers.replaceChildren(h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'No MCP servers yet: register one above.')));
  }

  private renderRules(items: ProxyRule[]): void {
    this.rules.replaceChildren(
      ...items.map((r) =>
        h(
          'tr',
          { 'data-rule-id': r.ruleId, 'data-state': r.enabled ? 'active' : 'disabled' },
          cell('#', { class: 'num' }, String(r.position + 1)),
          cell('Name', {}, r.name),
          cell('Condition', { class: 'id' }, h('code', {}, r.condition)),
          cell('Action', {}, h('span', { class: `action action-${r.action}` }, r.action)),
          cell('Reason', {}, r.reason ?? ''),
          cell('', { class: 'op' }, h('button', { type: 'button', class: 'btn small danger', 'data-delete-rule': r.ruleId, 'aria-label': `Remove rule ${r.name}` }, 'Remove')),
        ),
      ),
    );
    if (items.length === 0) this.rules.replaceChildren(h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'No rules: every call is allowed (suspended sessions are still denied).')));
  }

  private value(id: string): string {
    return byId<HTMLInputElement>(id).value.trim();
  }

  /** Registers or changes a server; a secret header is sent only when a value is typed (else the stored one is kept). */
  private async saveServer(): Promise<void> {
    const id = this.value('proxy-server-id');
    const url = this.value('proxy-server-url');
    if (!id || !url) return this.setServerError('Give the server an id and its upstream URL.');
    const header = this.value('proxy-server-header');
    const secret = byId<HTMLInputElement>('proxy-server-secret').value;
    const existing = (await api.proxy.servers().catch(() => ({ items: [] as ProxyServer[] }))).items.find((x) => x.serverId === id);
    const headers: { name: string; value?: string; secret: boolean }[] = (existing?.headers ?? [])
      .filter((x) => !header || x.name.toLowerCase() !== header.toLowerCase())
      .map((x) => (x.secret ? { name: x.name, secret: true } : { name: x.name, value: x.value ?? '', secret: false }));
    if (header) headers.push(secret ? { name: header, value: secret, secret: true } : { name: header, secret: true });
    this.setServerError('');
    try {
      await api.proxy.putServer(id, { url, headers, ...(existing ? { timeoutMs: existing.timeoutMs } : {}) });
      for (const f of ['proxy-server-id', 'proxy-server-url', 'proxy-server-header', 'proxy-server-secret']) byId<HTMLInputElement>(f).value = '';
      await this.load();
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      this.setServerError(`The server was not saved: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async deleteServer(id: string): Promise<void> {
    try {
      await api.proxy.deleteServer(id);
      await this.load();
    } catch (err) {
      this.fail('The server was not removed', err);
    }
  }

  private setServerError(message: string): void {
    this.serverError.textContent = message;
    this.serverError.hidden = !message;
  }

  private async addRule(): Promise<void> {
    const name = this.value('proxy-rule-name');
    const condition = this.value('proxy-rule-condition');
    if (!name || !condition) return this.setError('Give the rule a name and a condition.');
    this.setError('');
    try {
      await api.proxy.addRule({ name, condition, action: byId<HTMLSelectElement>('proxy-rule-action').value as ProxyRule['action'], reason: this.value('proxy-rule-reason') || null });
      for (const id of ['proxy-rule-name', 'proxy-rule-condition', 'proxy-rule-reason']) byId<HTMLInputElement>(id).value = '';
      await this.load();
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      this.setError(`The rule was not added: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async deleteRule(id: string): Promise<void> {
    try {
      await api.proxy.deleteRule(id);
      await this.load();
    } catch (err) {
      this.fail('The rule was not removed', err);
    }
  }

  private async dryRun(): Promise<void> {
    let args: Record<string, unknown> = {};
    const text = this.value('proxy-dry-args');
    try {
      if (text) args = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.verdict.textContent = 'The arguments are not valid JSON.';
      return;
    }
    try {
      const r = await api.proxy.dryRun({ serverId: this.value('proxy-dry-server'), toolName: this.value('proxy-dry-tool'), arguments: args });
      const lines = [`${r.action}${r.rule ? ` by "${r.rule.name}"` : ' (no rule matched)'}${r.reason ? `: ${r.reason}` : ''}`];
      for (const x of r.rules) lines.push(`  ${x.matched ? 'matched' : x.error ? 'error  ' : 'no     '}  ${x.name}${x.error ? ` (${x.error})` : ''}`);
      this.verdict.textContent = lines.join('\n');
    } catch (err) {
      if (isUnauthorized(err)) return this.signedOut();
      this.verdict.textContent = `The dry run failed: ${err instanceof Error ? err.message : String(err)}`;
    }
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
