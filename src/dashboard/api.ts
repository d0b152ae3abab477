// The dashboard's calls to the audit-stream HTTP API (same origin, cookie auth) and the shapes they return.

import type { AnomalyAcknowledgement, ApiKey, AuditEventCount, AuditEventPage, AuditEventRow, CreatedApiKey, SessionPage, SessionRow, StatsSnapshot, UserMe } from '../contract/api-rows.js';

// The shapes are the server's own (src/contract), imported as types only; the page signs in with a cookie, so /auth/me
// answers it as a user.
export type { AnomalyAcknowledgement, AuditEventCount, ApiKey, AuditEventRow as StoredAuditEvent, Organization, SessionRow as Session, StatsSnapshot, UserMe as Me } from '../contract/api-rows.js';

/** A failed call: `status` 0 means the service could not be reached at all. */
export interface ProxyServer {
  serverId: string;
  url: string;
  endpoint: string;
  headers: { name: string; value: string | null; secret: boolean }[];
  timeoutMs: number;
}
export interface ProxyRuleInput {
  name: string;
  condition: string;
  action: 'allow' | 'deny' | 'flag' | 'redact';
  reason?: string | null;
}
export interface ProxyRule extends ProxyRuleInput {
  ruleId: string;
  position: number;
  enabled: boolean;
}
export interface ProxyDryRun {
  action: string;
  rule: { id: string; name: string } | null;
  reason: string | null;
  rules: { ruleId: string; name: string; matched: boolean; error: string | null }[];
}

export interface RecognitionProfile {
  id: string;
  version: number;
  description: string;
  source: string;
  when: string;
  fields: Record<string, string>;
}
export interface UnrecognizedRow {
  source: string;
  name: string;
  count: number;
  sample: string;
  lastSeen: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> | null = null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const isUnauthorized = (err: unknown): boolean => err instanceof ApiError && err.status === 401;

async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const init: RequestInit = { method, credentials: 'include', headers };
  if (method === 'POST' || method === 'PUT') {
    // Always a JSON body on writes: the server rejects an empty body sent as application/json.
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network_error', 'The service cannot be reached.');
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : null;
    const retryAfter = Number(res.headers.get('Retry-After'));
    throw new ApiError(
      res.status,
      typeof err?.code === 'string' ? err.code : `http_${res.status}`,
      typeof err?.message === 'string' ? err.message : `${res.status} ${res.statusText}`,
      err,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
    );
  }
  return data as T;
}

export const api = {
  me: () => request<UserMe>('GET', '/api/v1/auth/me'),
  login: (email: string, password: string) => request<UserMe>('POST', '/api/v1/auth/login', { email, password }),
  logout: () => request<void>('POST', '/api/v1/auth/logout'),
  setActiveOrganization: (organizationId: string) => request<UserMe>('PUT', '/api/v1/auth/active-organization', { organizationId }),
  sessions: (limit = 100) => request<SessionPage>('GET', `/api/v1/sessions?limit=${limit}`),
  session: (id: string) => request<SessionRow>('GET', `/api/v1/sessions/${encodeURIComponent(id)}`),
  suspendSession: (id: string, reason = '') => request<SessionRow>('POST', `/api/v1/sessions/${encodeURIComponent(id)}/suspend`, reason ? { reason } : {}),
  resumeSession: (id: string) => request<SessionRow>('POST', `/api/v1/sessions/${encodeURIComponent(id)}/resume`, {}),
  /** One page of stored events for a query string of GET /api/v1/audit-events (filters, order, limit, cursor). */
  events: (query: URLSearchParams) => request<AuditEventPage>('GET', `/api/v1/audit-events?${query}`),
  count: (query: URLSearchParams) => request<AuditEventCount>('GET', `/api/v1/audit-events/count?${query}`),
  /** The stored event with this seq, or null when there is none (removed by retention, or another organization's). */
  event: async (seq: number): Promise<AuditEventRow | null> => {
    const page = await request<AuditEventPage>('GET', `/api/v1/audit-events?order=asc&limit=1&cursor=${seq - 1}`);
    return page.items[0]?.seq === seq ? page.items[0] : null;
  },
  exportUrl: (query: URLSearchParams) => `/api/v1/audit-events/export?${query}`,
  acknowledgement: () => request<AnomalyAcknowledgement>('GET', '/api/v1/anomalies/acknowledgement'),
  acknowledge: (upToSeq: number) => request<AnomalyAcknowledgement>('PUT', '/api/v1/anomalies/acknowledgement', { upToSeq }),
  recentToolCalls: (limit = 200) => request<AuditEventPage>('GET', `/api/v1/audit-events?type=tool_call&limit=${limit}&order=desc`),
  sessionCalls: (sessionId: string, limit = 200) =>
    request<AuditEventPage>('GET', `/api/v1/audit-events?type=tool_call&sessionId=${encodeURIComponent(sessionId)}&limit=${limit}&order=desc`),
  stats: (window: string) => request<StatsSnapshot>('GET', `/api/v1/audit-events/stats?window=${encodeURIComponent(window)}`),
  apiKeys: () => request<{ items: ApiKey[] }>('GET', '/api/v1/api-keys'),
  createApiKey: (name: string, scopes: string[]) => request<CreatedApiKey>('POST', '/api/v1/api-keys', { name, scopes }),
  revokeApiKey: (id: string) => request<void>('DELETE', `/api/v1/api-keys/${encodeURIComponent(id)}`),
  /** The MCP proxy's configuration (proxy-view.ts). */
  proxy: {
    servers: () => request<{ items: ProxyServer[] }>('GET', '/api/v1/mcp/servers'),
    putServer: (id: string, body: { url: string; headers: { name: string; value?: string; secret: boolean }[]; timeoutMs?: number }) =>
      request<ProxyServer>('PUT', `/api/v1/mcp/servers/${encodeURIComponent(id)}`, body),
    deleteServer: (id: string) => request<void>('DELETE', `/api/v1/mcp/servers/${encodeURIComponent(id)}`),
    rules: () => request<{ items: ProxyRule[] }>('GET', '/api/v1/mcp/rules'),
    addRule: (rule: ProxyRuleInput) => request<ProxyRule>('POST', '/api/v1/mcp/rules', rule),
    deleteRule: (id: string) => request<void>('DELETE', `/api/v1/mcp/rules/${encodeURIComponent(id)}`),
    dryRun: (call: { serverId: string; toolName: string; arguments: Record<string, unknown> }) => request<ProxyDryRun>('POST', '/api/v1/mcp/rules/dry-run', { call }),
  },
  /** Recognition profiles and the unrecognized report (recognition-view.ts). */
  recognition: {
    profiles: () => request<{ items: RecognitionProfile[]; builtin: RecognitionProfile[] }>('GET', '/api/v1/recognition/profiles'),
    addProfile: (profile: unknown) => request<RecognitionProfile>('POST', '/api/v1/recognition/profiles', profile),
    deleteProfile: (id: string) => request<void>('DELETE', `/api/v1/recognition/profiles/${encodeURIComponent(id)}`),
    unrecognized: () => request<{ items: UnrecognizedRow[] }>('GET', '/api/v1/recognition/unrecognized?limit=200'),
  },
};

/** Whether `me` is an admin of its active organization (the keys and proxy screens are theirs). */
export function isOrgAdmin(me: UserMe): boolean {
  return me.organizations.find((o) => o.id === me.activeOrganizationId)?.role === 'admin';
}
