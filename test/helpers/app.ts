// Starts real app instances on 127.0.0.1:0 (or, for route-level suites that need no socket, ready for app.inject) and
// provisions organizations, users and keys through the admin API.
import { PassThrough } from 'node:stream';
import { buildApp, type AppContext, type BuildOptions } from '../../src/app.js';
import { testConfig } from '../../src/config.js';
import { SCOPES } from '../../src/auth/tokens.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface RunningApp {
  url: string;
  ctx: AppContext;
  logs: string[];
  close(): Promise<void>;
}

/** Apps started with `inject`, by their `inject://` base URL: requests to it are served by app.inject, with no socket. */
const injected = new Map<string, AppContext['app']>();
let injectedCount = 0;

export interface StartOptions {
  /** Not listening: the app's `url` is `inject://app-N`, which http() and login() serve with app.inject. */
  inject?: boolean;
}

export async function startApp(env: Record<string, string | undefined>, opts: Omit<BuildOptions, 'logStream'> = {}, start: StartOptions = {}): Promise<RunningApp> {
  const logs: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (c: Buffer) => logs.push(c.toString()));
  const config = testConfig({ ADMIN_TOKEN, LOG_LEVEL: 'info', LOGIN_RATE_LIMIT_MAX: '1000', LOGIN_RATE_LIMIT_PER_ADDRESS_MAX: '100000', ...env });
  const ctx = await buildApp(config, { ...opts, logStream });
  let address: string;
  if (start.inject) {
    await ctx.app.ready();
    address = `inject://app-${++injectedCount}`;
    injected.set(address, ctx.app);
  } else {
    address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  }
  let closed = false;
  return {
    url: address,
    ctx,
    logs,
    async close() {
      if (closed) return;
      closed = true;
      injected.delete(address);
      await ctx.app.close();
    },
  };
}

/** fetch, or for an `inject://` URL the same request through app.inject, answered as a Response. */
export async function send(url: string, init: RequestInit = {}): Promise<Response> {
  const u = new URL(url);
  const app = u.protocol === 'inject:' ? injected.get(`inject://${u.host}`) : undefined;
  if (!app) return fetch(url, init);
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((v, k) => (headers[k] = v));
  const body = init.body instanceof Uint8Array && !Buffer.isBuffer(init.body) ? Buffer.from(init.body.buffer, init.body.byteOffset, init.body.byteLength) : init.body;
  const res = await app.inject({ method: (init.method ?? 'GET') as 'GET', url: `${u.pathname}${u.search}`, headers, payload: body as string | Buffer | undefined });
  const out = new Headers();
  for (const [k, v] of Object.entries(res.headers)) for (const one of Array.isArray(v) ? v : [v]) if (one !== undefined) out.append(k, String(one));
  return new Response(res.statusCode === 204 || res.statusCode === 304 ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers: out });
}

export interface Json {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

export async function http(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Json> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await send(url, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export interface TestOrg {
  id: string;
  name: string;
  key: string;
  keyId: string;
  email: string;
  password: string;
}

let counter = 0;

/** Creates an org, an admin user and a key with every scope (or the given scopes) through the admin API. */
export async function createOrg(baseUrl: string, opts: { scopes?: string[]; role?: 'admin' | 'member' } = {}): Promise<TestOrg> {
  const n = ++counter;
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const org = await http(`${baseUrl}/api/v1/admin/organizations`, { method: 'POST', headers: auth, json: { name: `Org ${n}` } });
  if (org.status !== 201) throw new Error(`create org: ${org.status} ${JSON.stringify(org.body)}`);
  const email = `user${n}-${Math.random().toString(36).slice(2)}@example.test`;
  const password = `pw-${Math.random().toString(36).slice(2)}-long`;
  const user = await http(`${baseUrl}/api/v1/admin/organizations/${org.body.id}/users`, {
    method: 'POST',
    headers: auth,
    json: { email, password, role: opts.role ?? 'admin' },
  });
  if (user.status !== 201) throw new Error(`create user: ${user.status} ${JSON.stringify(user.body)}`);
  const key = await http(`${baseUrl}/api/v1/admin/organizations/${org.body.id}/api-keys`, {
    method: 'POST',
    headers: auth,
    json: { name: `key ${n}`, scopes: opts.scopes ?? [...SCOPES] },
  });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${JSON.stringify(key.body)}`);
  return { id: org.body.id, name: org.body.name, key: key.body.key, keyId: key.body.id, email, password };
}

/** Signs in and returns the session cookie header value. */
export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await send(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${await res.text()}`);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('audit_stream_session='));
  if (!cookie) throw new Error('no session cookie');
  return cookie.split(';')[0];
}

export function bearer(key: string) {
  return { authorization: `Bearer ${key}` };
}

/** Posts raw tool-call events; returns the parsed response. */
export function postEvents(baseUrl: string, key: string, events: unknown): Promise<Json> {
  return http(`${baseUrl}/api/v1/ingest/events`, { method: 'POST', headers: bearer(key), json: events });
}

export function toolCall(i: number, extra: Record<string, unknown> = {}) {
  return { id: `e-${i}-${Math.random().toString(36).slice(2)}`, serverId: 'srv-1', toolName: 'search', action: 'allow', latencyMs: i % 100, timestamp: new Date().toISOString(), ...extra };
}
