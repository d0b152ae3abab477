// Dashboard entry point: checks the login, loads the views, runs the live stream and handles windows, views, organization switches and sign-out.
import { STATS_WINDOW_NAMES, type StatsWindow } from '../audit/stats-windows.js';
import { AnomalyList, anomalyFromStats } from './anomalies.js';
import { api, isUnauthorized, type Me } from './api.js';
import { RateChart } from './chart.js';
import { ActionCounts } from './counts.js';
import { byId, h, onNextFrame } from './dom.js';
import { installCopyOnClick } from './ids.js';
import { KeysView } from './keys.js';
import { ProxyView } from './proxy-view.js';
import { LoginForm } from './login.js';
import { fromStored, SessionCalls } from './session-calls.js';
import { SessionsView } from './sessions.js';
import { LiveStream, type ConnectionState } from './stream.js';
import { ToolCallTable } from './table.js';
import { WindowFigures } from './window-figures.js';

const loginView = byId('login-view');
const dashboard = byId('dashboard');
const keysView = byId('keys-view');
const nav = byId('nav');
const navKeys = byId('nav-keys');
const proxyView = byId('proxy-view');
const navProxy = byId('nav-proxy');
const account = byId('account');
const userEmail = byId('user-email');
const orgSlot = byId('org-slot');
const logoutButton = byId<HTMLButtonElement>('logout');
const badge = byId('connection-state');
const notice = byId('notice');

/** How often the window's figures are read again from the server (the window slides; session counters move). */
const STATS_REFRESH_MS = 60_000;

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
const endedLogin = () => showSignedOut('Your login has ended. Sign in again.');

const table = new ToolCallTable(byId<HTMLTableSectionElement>('tool-calls-body'), byId('tool-calls-empty'), byId('calls-shown'));
const counts = new ActionCounts(byId('action-counts'));
const chart = new RateChart(byId<SVGSVGElement>('rate-chart'), byId('rate-axis'), byId('rate-scale'), byId('rate-summary'), byId('rate-title'));
const anomalies = new AnomalyList(byId('anomalies'), byId<HTMLUListElement>('anomaly-list'), byId('anomalies-empty'), byId('anomaly-count'), byId<HTMLButtonElement>('anomalies-clear'));
const sessions = new SessionsView(byId<HTMLTableSectionElement>('sessions-body'), byId('sessions-empty'), notify, endedLogin);
const sessionCalls = new SessionCalls(endedLogin);
const keys = new KeysView(notify, endedLogin);
const proxy = new ProxyView(notify, endedLogin);
const figures = new WindowFigures(() => scheduleStats(0));
const login = new LoginForm((me) => showSignedIn(me));
installCopyOnClick();

const renderFigures = (): void => {
  counts.show(figures.counts());
  chart.draw(figures.series(), figures.range, figures.label);
  sessions.showCounters(figures.sessions);
  byId('window-note').textContent = figures.asOfSeq < 0 ? 'loading…' : `tool calls by their timestamps, ${figures.label}`;
};
const drawFigures = (): void => onNextFrame(renderFigures);

const stream = new LiveStream({
  toolCall: (e) => {
    table.add(e);
    figures.addCall(e);
    sessions.noteToolCall(e);
    drawFigures();
  },
  anomaly: (e) => anomalies.add(e),
  sessionUpdate: (e) => {
    sessions.applyUpdate(e);
    scheduleStats(1500); // the session counters
  },
  state: setConnectionState,
  signedOut: endedLogin,
  identity: (me) => showSignedIn(me, me.activeOrganizationId !== current?.activeOrganizationId),
});

function setConnectionState(state: ConnectionState): void {
  badge.textContent = state;
  badge.dataset.state = state;
}

// The figures: read for the chosen window, again every minute and shortly after session changes; slid every few seconds.
let statsTimer = 0;
let statsGeneration = 0;
function scheduleStats(delayMs: number): void {
  window.clearTimeout(statsTimer);
  statsTimer = window.setTimeout(() => void loadStats(), delayMs);
}

/** Reads the window's figures; resolves to the seq they include, or null when they could not be read. */
async function loadStats(): Promise<number | null> {
  window.clearTimeout(statsTimer);
  if (!current) return null;
  const gen = ++statsGeneration;
  const window_ = figures.window;
  try {
    const s = await api.stats(window_);
    if (gen !== statsGeneration || window_ !== figures.window) return null;
    figures.load(s);
    anomalies.load(s.anomalies.map(anomalyFromStats), s.asOfSeq);
    drawFigures();
    return s.asOfSeq;
  } catch (err) {
    if (gen !== statsGeneration) return null;
    if (isUnauthorized(err)) {
      endedLogin();
      return null;
    }
    notify(`The figures of the ${figures.label} could not be loaded: ${messageOf(err)}`);
    return null;
  } finally {
    if (gen === statsGeneration && current) statsTimer = window.setTimeout(() => void loadStats(), STATS_REFRESH_MS);
  }
}
window.setInterval(() => {
  if (!current) return;
  figures.slide(Date.now());
  drawFigures();
}, 5000);

for (const button of Array.from(document.querySelectorAll<HTMLButtonElement>('[data-window]'))) {
  button.addEventListener('click', () => selectWindow(button.dataset.window as StatsWindow));
}
function selectWindow(w: StatsWindow): void {
  if (!STATS_WINDOW_NAMES.includes(w) || w === figures.window) return;
  for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>('[data-window]'))) b.setAttribute('aria-pressed', String(b.dataset.window === w));
  figures.setWindow(w);
  drawFigures();
  void loadStats();
}

byId<HTMLInputElement>('calls-filter').addEventListener('input', (ev) => table.setFilter((ev.target as HTMLInputElement).value));
document.addEventListener('click', (ev) => {
  const el = (ev.target as Element | null)?.closest<HTMLElement>('[data-session]');
  if (el?.dataset.session) void sessionCalls.open(el.dataset.session);
});

function clearViews(): void {
  table.clear();
  anomalies.reset();
  sessions.clear();
  sessionCalls.close();
  keys.reset();
  proxy.reset();
  figures.reset();
  drawFigures();
}

function showSignedOut(note = ''): void {
  loadGeneration++;
  statsGeneration++;
  window.clearTimeout(statsTimer);
  stream.stop();
  current = null;
  clearViews();
  setConnectionState('signed out');
  account.hidden = true;
  nav.hidden = true;
  dashboard.hidden = true;
  keysView.hidden = true;
  proxyView.hidden = true;
  orgSlot.replaceChildren();
  userEmail.textContent = '';
  loginView.hidden = false;
  login.reset(note);
}

const isOrgAdmin = (me: Me | null): boolean => me?.organizations.find((o) => o.id === me.activeOrganizationId)?.role === 'admin';

/** Shows the signed-in page for `me`; `reload` clears the views and reconnects (first sign-in, organization switch). */
function showSignedIn(me: Me, reload = true): void {
  current = me;
  userEmail.textContent = me.user.email;
  renderOrgSwitcher(me);
  loginView.hidden = true;
  account.hidden = false;
  nav.hidden = false;
  navKeys.hidden = !isOrgAdmin(me);
  navProxy.hidden = !isOrgAdmin(me);
  route();
  if (reload) void loadViews();
}

/** #keys and #proxy show the key and MCP proxy screens to organization admins; anything else the live view. */
function route(): void {
  if (!current) return;
  const onKeys = location.hash === '#keys' && isOrgAdmin(current);
  const onProxy = location.hash === '#proxy' && isOrgAdmin(current);
  dashboard.hidden = onKeys || onProxy;
  keysView.hidden = !onKeys;
  proxyView.hidden = !onProxy;
  byId('nav-live').toggleAttribute('aria-current', !onKeys && !onProxy);
  navKeys.toggleAttribute('aria-current', onKeys);
  navProxy.toggleAttribute('aria-current', onProxy);
  if (onKeys) void keys.load();
  else keys.reset();
  if (onProxy) void proxy.load();
  else proxy.reset();
}
window.addEventListener('hashchange', route);

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
    if (isUnauthorized(err)) return endedLogin();
    notify(`Could not switch organization: ${messageOf(err)}`);
    if (current) renderOrgSwitcher(current);
  }
}

/**
 * Loads sessions, the window's figures (as of seq S), then the latest tool calls (up to seq T), and streams from the
 * lower of S and T: the stream then brings every call the figures or the table lack; the table drops the ones it has,
 * the figures count only seqs above S, and the sessions count calls after their list was read.
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
    if (isUnauthorized(err)) return endedLogin();
    notify(`Sessions could not be loaded: ${messageOf(err)}`);
  }
  const statsSeq = await loadStats();
  if (gen !== loadGeneration) return;
  let tableSeq = 0;
  try {
    const page = await api.recentToolCalls(200);
    if (gen !== loadGeneration) return;
    for (const e of page.items) {
      table.add(fromStored(e));
      tableSeq = Math.max(tableSeq, e.seq);
    }
  } catch (err) {
    if (gen !== loadGeneration) return;
    if (isUnauthorized(err)) return endedLogin();
    console.warn(`dashboard: recent tool calls could not be loaded: ${messageOf(err)}`);
  }
  stream.start(statsSeq === null ? tableSeq : tableSeq > 0 ? Math.min(statsSeq, tableSeq) : statsSeq);
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
