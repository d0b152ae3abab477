// Shared pieces of the log ingest tests: fixture loading, posting to an ingest route, reading back stored events.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AuditEventRow } from '../../src/audit/audit-repo.js';
import { bearer, http, type Json } from '../helpers/app.js';
import type { SseClient } from '../helpers/sse.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** A fixture file's bytes. */
export function fixture(path: string): Buffer {
  return readFileSync(`${FIXTURES}${path}`);
}

/** A JSON fixture, parsed. */
export function fixtureJson<T = any>(path: string): T { // eslint-disable-line @typescript-eslint/no-explicit-any
  return JSON.parse(fixture(path).toString('utf8')) as T;
}

export type Route = 'cloudwatch' | 'firehose' | 'datadog';

/** A fetch body from text or bytes. */
export function bodyOf(body: string | Uint8Array): BodyInit {
  return typeof body === 'string' ? body : new Uint8Array(body);
}

/** Posts bytes or text to /api/v1/ingest/<route> with the key in the header the route reads. */
export function post(baseUrl: string, route: Route, key: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Json> {
  const auth = route === 'firehose' ? { 'x-amz-firehose-access-key': key } : bearer(key);
  return http(`${baseUrl}/api/v1/ingest/${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: bodyOf(body) });
}

/** Posts a value as JSON. */
export function postJson(baseUrl: string, route: Route, key: string, value: unknown, headers: Record<string, string> = {}): Promise<Json> {
  return post(baseUrl, route, key, JSON.stringify(value), headers);
}

/** A stored event as GET /api/v1/audit-events returns it, with metadata loosely typed for field-by-field checks. */
export type StoredEvent = Omit<AuditEventRow, 'metadata'> & { metadata: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every stored event of the key's org, oldest first (all pages). */
export async function storedEvents(baseUrl: string, key: string, query = ''): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  let cursor: string | null = null;
  do {
    const r: Json = await http(`${baseUrl}/api/v1/audit-events?order=asc&limit=1000${query}${cursor ? `&cursor=${cursor}` : ''}`, { headers: bearer(key) });
    if (r.status !== 200) throw new Error(`audit-events: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...(r.body.items as StoredEvent[]));
    cursor = r.body.nextCursor;
  } while (cursor);
  return out;
}

/** Stored events that came from an ingest source (session_update events the write path adds are left out). */
export async function ingestedEvents(baseUrl: string, key: string): Promise<StoredEvent[]> {
  return (await storedEvents(baseUrl, key)).filter((e) => e.source !== 'system');
}

/** The columns of a stored event other than seq, receivedAt and metadata. */
export function columns(e: StoredEvent) {
  return { type: e.type, source: e.source, occurredAt: e.occurredAt, serverId: e.serverId, sessionId: e.sessionId, toolName: e.toolName, action: e.action, latencyMs: e.latencyMs };
}

/** The stream payload expected for a stored tool call. */
export function streamPayloadOf(e: StoredEvent) {
  return { type: 'tool_call', serverId: e.serverId, sessionId: e.sessionId, toolName: e.toolName, action: e.action, latencyMs: e.latencyMs, timestamp: e.occurredAt };
}

/** A TCP proxy of the test's own in front of a service; cut() drops every connection and refuses new ones. */
export async function startCuttableProxy(targetHost: string, targetPort: number): Promise<{ port: number; cut(): void; restore(): void; close(): Promise<void> }> {
  const { createServer, connect } = await import('node:net');
  let down = false;
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy()).on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    down = true;
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as { port: number }).port,
    cut,
    restore: () => {
      down = false;
    },
    close: () => {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The database URL of `env` routed through a proxy on 127.0.0.1:port. */
export function viaProxy(databaseUrl: string, port: number): string {
  const u = new URL(databaseUrl);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

/**
 * Posts a marker tool call and waits for it on the stream, so everything published before it has arrived; the marker
 * is then dropped from the received events. Lets a test check that something was NOT streamed without sleeping.
 */
export async function drainStream(sse: SseClient, baseUrl: string, key: string): Promise<void> {
  const marker = `marker-${Math.random().toString(36).slice(2)}`;
  const r = await postJson(baseUrl, 'cloudwatch', key, { logGroup: 'markers', logStream: 'm', events: [{ message: `tool=${marker}`, timestamp: new Date().toISOString() }] });
  if (r.status !== 200) throw new Error(`marker: ${r.status}`);
  await sse.waitFor((c) => c.events.some((e) => e.json?.toolName === marker), 15_000, 'marker');
  sse.events.splice(sse.events.findIndex((e) => e.json?.toolName === marker));
}

/** The stream carries exactly the stored tool calls (ids = seqs, spec payloads) plus session_update events, and no log entries. */
export async function expectStreamedExactly(sse: SseClient, baseUrl: string, key: string, stored: StoredEvent[]): Promise<void> {
  await drainStream(sse, baseUrl, key);
  const calls = stored.filter((e) => e.type === 'tool_call');
  const streamedCalls = sse.events.filter((e) => e.event === 'tool_call');
  if (JSON.stringify(streamedCalls.map((e) => Number(e.id))) !== JSON.stringify(calls.map((e) => e.seq))) {
    throw new Error(`streamed seqs ${streamedCalls.map((e) => e.id).join(',')} != stored tool_call seqs ${calls.map((e) => e.seq).join(',')}`);
  }
  const expected = JSON.stringify(calls.map(streamPayloadOf));
  const got = JSON.stringify(streamedCalls.map((e) => e.json));
  if (got !== expected) throw new Error(`streamed payloads differ:\n got ${got}\nwant ${expected}`);
  const others = sse.events.filter((e) => e.event !== 'tool_call' && e.event !== 'session_update');
  if (others.length) throw new Error(`unexpected stream events: ${others.map((e) => e.event).join(',')}`);
  sse.close();
}
