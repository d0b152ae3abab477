// Dashboard entry point: checks the login, loads the views, runs the live stream and handles organization switches and sign-out.
import { AnomalyList } from './anomalies.js';
import { api, isUnauthorized, type Me, type StoredAuditEvent } from './api.js';
import { RateChart } from './chart.js';
import { ActionCounts } from './counts.js';
import { byId, h } from './dom.js';
import { LoginForm } from './login.js';
import { SessionsView } from './sessions.js';
import { LiveStream, type ConnectionState, type ToolCallEvent } from './stream.js';
import { actionKey, ToolCallTable } from './table.js';

const loginView = byId('login-view');
const dashboard = byId('dashboard');
const account = byId('account');
const userEmail = byId('user-email');
const orgSlot = byId('org-slot');
const logoutButton = byId<HTMLButtonElement>('logout');
const badge = byId('connection-state');
const notice = byId('notice');

/** Who is signed in, and to which organization; null when signed out. */
let current: Me | null = null;
/** Bumped whenever the views are reloaded or torn down, so late answers of an earlier load are dropped. */
let loadGeneration = 0;
let noticeTimer = 0;
function notify(message: string): void {
  notice.textContent = message;
  notice.hidden = false;
  window.clearTimeout(noticeTimer);
  noticeTimer = window.setTimeout(() => (notice.hidden = true), 8000);
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

const table = new ToolCallTable(byId<HTMLTableSectionElement>('tool-calls-body'), byId('tool-calls-empty'));
const counts = new ActionCounts(byId('action-counts'));
const chart = new RateChart(byId<SVGSVGElement>('rate-chart'), byId('rate-summary'));
const anomalies = new AnomalyList(byId('anomalies'), byId<HTMLUListElement>('anomaly-list'), byId('anomalies-empty'), byId('anomaly-count'), byId<HTMLButtonElement>('anomalies-clear'));
const sessions = new SessionsView(byId<HTMLTableSectionElement>('sessions-body'), byId('sessions-empty'), notify, () => showSignedOut('Your login has ended. Sign in again.'));
const login = new LoginForm((me) => showSignedIn(me));

/** Adds a tool call to the table and, when it was not there yet, to the counts (and the chart when it is live). */
function addToolCall(call: ToolCallEvent, live: boolean): void {
  if (!table.add(call)) return;
  counts.add(actionKey(call.action));
  if (live) {
    chart.record();
    sessions.noteToolCall(call);
  }
}

const stream = new LiveStream({
  toolCall: (e) => addToolCall(e, true),
  anomaly: (e) => anomalies.add(e),
  sessionUpdate: (e) => sessions.applyUpdate(e),
  state: setConnectionState,
  signedOut: () => showSignedOut('Your login has ended. Sign in again.'),
  identity: (me) => showSignedIn(me, me.activeOrganizationId !== current?.activeOrganizationId),
});

function setConnectionState(state: ConnectionState): void {
  badge.textContent = state;
  badge.dataset.state = state;
}

function clearViews(): void {
  table.clear();
  counts.reset();
  chart.reset();
  anomalies.clear();
  sessions.clear();
}

function showSignedOut(note = ''): void {
  loadGeneration++;
  stream.stop();
  current = null;
  clearViews();
  setConnectionState('signed out');
  account.hidden = true;
  dashboard.hidden = true;
  orgSlot.replaceChildren();
  userEmail.textContent = '';
  loginView.hidden = false;
  login.reset(note);
}

/** Shows the signed-in page for `me`; `reload` clears the views and reconnects (first sign-in, organization switch). */
function showSignedIn(me: Me, reload = true): void {
  current = me;
  userEmail.textContent = me.user.email;
  renderOrgSwitcher(me);
  loginView.hidden = true;
  account.hidden = false;
  dashboard.hidden = false;
  if (reload) void loadViews();
}

function renderOrgSwitcher(me: Me): void {
  orgSlot.replaceChildren();
  if (me.organizations.length < 2) return;
  const select = h('select', { id: 'org-switcher', 'aria-label': 'Organization' });
  for (const org of me.organizations) {
    select.append(h('option', { value: org.id, selected: org.id === me.activeOrganizationId }, `${org.name} (${org.role})`));
  }
  select.addEventListener('change', () => void switchOrganization(select));
  orgSlot.append(select);
}

async function switchOrganization(select: HTMLSelectElement): Promise<void> {
  if (!current || select.value === current.activeOrganizationId) return;
  select.disabled = true;
  try {
    showSignedIn(await api.setActiveOrganization(select.value));
  } catch (err) {
    if (isUnauthorized(err)) return showSignedOut('Your login has ended. Sign in again.');
    notify(`Could not switch organization: ${messageOf(err)}`);
    if (current) renderOrgSwitcher(current);
  }
}

const fromStored = (e: StoredAuditEvent): ToolCallEvent => ({
  seq: e.seq,
  serverId: e.serverId,
  sessionId: e.sessionId,
  toolName: e.toolName,
  action: e.action,
  latencyMs: e.latencyMs,
  timestamp: e.occurredAt,
});

/**
 * Loads sessions, then the latest tool calls, then streams from the newest seq loaded. In that order the stream's
 * replay brings exactly what happened after the table was filled, and no call is counted twice in the sessions.
 */
async function loadViews(): Promise<void> {
  const gen = ++loadGeneration;
  stream.stop();
  clearViews();
  setConnectionState('reconnecting');
  if (!current || current.organizations.length === 0) {
    notify('This account belongs to no organization, so there is nothing to show.');
    return;
  }
  try {
    const page = await api.sessions(100);
    if (gen !== loadGeneration) return;
    sessions.load(page.items);
  } catch (err) {
    if (gen !== loadGeneration) return;
    if (isUnauthorized(err)) return showSignedOut('Your login has ended. Sign in again.');
    notify(`Sessions could not be loaded: ${messageOf(err)}`);
  }
  let afterSeq = 0;
  try {
    const page = await api.recentToolCalls(50);
    if (gen !== loadGeneration) return;
    for (const e of page.items) {
      addToolCall(fromStored(e), false);
      afterSeq = Math.max(afterSeq, e.seq);
    }
  } catch (err) {
    if (gen !== loadGeneration) return;
    if (isUnauthorized(err)) return showSignedOut('Your login has ended. Sign in again.');
    console.warn(`dashboard: recent tool calls could not be loaded: ${messageOf(err)}`);
  }
  stream.start(afterSeq);
}

logoutButton.addEventListener('click', async () => {
  logoutButton.disabled = true;
  try {
    await api.logout();
  } catch (err) {
    if (!isUnauthorized(err)) {
      notify(`Sign-out failed: ${messageOf(err)}`);
      return;
    }
  } finally {
    logoutButton.disabled = false;
  }
  showSignedOut();
});

async function boot(): Promise<void> {
  try {
    showSignedIn(await api.me());
  } catch (err) {
    if (isUnauthorized(err)) return showSignedOut();
    notify(`The service cannot be reached (${messageOf(err)}); retrying…`);
    window.setTimeout(() => void boot(), 3000);
  }
}

void boot();
