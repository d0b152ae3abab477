// Dashboard entry point: checks the login, registers the screens (live, explore, API keys, MCP proxy, recognition), runs the one live stream they share, and handles organization switches and sign-out.
import { api, isUnauthorized, type Me } from './api.js';
import { byId, h } from './dom.js';
import { EventPanel } from './event-detail.js';
import { ExploreView } from './explore.js';
import { installCopyOnClick } from './ids.js';
import { KeysView } from './keys.js';
import { LiveScreen } from './live-screen.js';
import { ProxyView } from './proxy-view.js';
import { LoginForm } from './login.js';
import { RecognitionView } from './recognition-view.js';
import { Screens } from './screens.js';
import { SessionCalls } from './session-calls.js';
import { LiveStream, type ConnectionState } from './stream.js';

const loginView = byId('login-view');
const nav = byId('nav');
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
const endedLogin = () => showSignedOut('Your login has ended. Sign in again.');

installCopyOnClick();
const live = new LiveScreen(notify, endedLogin);
let explore: ExploreView | null = null;
const panel = new EventPanel(endedLogin, (seq) => explore?.noteOpenEvent(seq));
explore = new ExploreView(panel, notify, endedLogin);
const keys = new KeysView(notify, endedLogin);
const sessionCalls = new SessionCalls(endedLogin, (s) => live.sessionChanged(s), notify);
const login = new LoginForm((me) => showSignedIn(me));

// The screens, in the order of the top bar; the first is the default.
const screens = new Screens();
screens.register(live);
screens.register(explore);
screens.register(keys);
screens.register(new ProxyView(notify, endedLogin));
screens.register(new RecognitionView(notify, endedLogin));
window.addEventListener('hashchange', () => current && screens.route(current));
window.addEventListener('popstate', () => current && screens.route(current));

const stream = new LiveStream({
  toolCall: (e) => {
    live.toolCall(e);
    explore?.onStreamEvent(e.seq);
  },
  anomaly: (e) => {
    live.anomaly(e);
    explore?.onStreamEvent(e.seq);
  },
  sessionUpdate: (e) => {
    live.sessionUpdate(e);
    explore?.onStreamEvent(e.seq);
  },
  state: setConnectionState,
  signedOut: endedLogin,
  identity: (me) => showSignedIn(me, me.activeOrganizationId !== current?.activeOrganizationId),
});

function setConnectionState(state: ConnectionState): void {
  badge.textContent = state;
  badge.dataset.state = state;
}

// A session id anywhere opens the session dialog (status, actions, calls).
document.addEventListener('click', (ev) => {
  const el = (ev.target as Element | null)?.closest<HTMLElement>('[data-session]');
  if (el?.dataset.session) void sessionCalls.open(el.dataset.session);
});

function showSignedOut(note = ''): void {
  loadGeneration++;
  stream.stop();
  current = null;
  screens.resetAll();
  screens.hideAll();
  sessionCalls.close();
  panel.close();
  setConnectionState('signed out');
  account.hidden = true;
  nav.hidden = true;
  orgSlot.replaceChildren();
  userEmail.textContent = '';
  loginView.hidden = false;
  login.reset(note);
}

/** Shows the signed-in page for `me`; `reload` clears the screens and reconnects (first sign-in, organization switch). */
function showSignedIn(me: Me, reload = true): void {
  current = me;
  userEmail.textContent = me.user.email;
  renderOrgSwitcher(me);
  loginView.hidden = true;
  account.hidden = false;
  nav.hidden = false;
  if (reload) {
    // Cleared before the current screen loads, so nothing it starts loading is thrown away.
    stream.stop();
    screens.resetAll();
    sessionCalls.close();
    panel.close();
  }
  screens.route(me);
  if (reload) void startLive(me);
}

/** Loads the live screen's data and streams from where it ends (every screen listens to the one stream). */
async function startLive(me: Me): Promise<void> {
  const gen = ++loadGeneration;
  setConnectionState('reconnecting');
  const after = await live.load(me);
  if (gen !== loadGeneration || after === null) return;
  stream.start(after);
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
    if (isUnauthorized(err)) return endedLogin();
    notify(`Could not switch organization: ${messageOf(err)}`);
    if (current) renderOrgSwitcher(current);
  }
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
