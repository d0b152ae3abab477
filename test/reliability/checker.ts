// The suite's checker: resilient SSE clients (reconnect with Last-Event-ID across instances), steady ingest traffic with retries, and per-org verification.
import { createSseParser } from '../helpers/sse-frames.js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { bearer, type TestOrg } from '../helpers/app.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- resilient stream client -----------------------------------------------------------------------------------------

export interface ReceivedEvent {
  seq: number;
  event: string;
  data: string;
  json: Record<string, unknown>;
  /** Which connection (0, 1, ...) delivered it. */
  connection: number;
}

export interface ConnectionRecord {
  url: string;
  status: number | 'network-error';
  /** Last-Event-ID sent when connecting (null: none). */
  lastEventId: number | null;
  /** How the connection ended: 'eof' (server ended it), 'error' (reset / aborted), 'closed' (we closed it), null while open. */
  end: 'eof' | 'error' | 'closed' | null;
  comments: { text: string; at: number }[];
  events: number;
  openedAt: number;
  endedAt: number | null;
}

export interface ResilientStreamOptions {
  /** Base URLs of instances to connect to; each reconnect moves to the next one. */
  urls: () => string[];
  path?: string;
  headers: Record<string, string>;
  /** Seq the client starts after. null: the first connection sends no Last-Event-ID (only right before any traffic). */
  startAfter: number | null;
  name: string;
  /** Delay before reconnecting (the SSE retry delay). */
  retryMs?: number;
}

/**
 * A real SSE client over fetch that never gives up: when its connection ends or fails it reconnects to the next
 * instance with Last-Event-ID = the last seq it received, like a browser's EventSource with failover. Every event of
 * every connection is kept in one list, so exactly-once in-order delivery can be checked across cuts.
 */
export class ResilientStream {
  readonly received: ReceivedEvent[] = [];
  readonly connections: ConnectionRecord[] = [];
  private stopped = false;
  private ctrl: AbortController | null = null;
  private waiters = new Set<() => void>();
  private loop: Promise<void> | null = null;
  private firstOpen: Promise<void>;
  private resolveFirstOpen!: () => void;

  constructor(readonly opts: ResilientStreamOptions) {
    this.firstOpen = new Promise((r) => (this.resolveFirstOpen = r));
  }

  get startAfter(): number {
    return this.opts.startAfter ?? 0;
  }

  /** Starts the connect loop; resolves once the first connection answered 200. */
  async start(): Promise<void> {
    this.loop = this.run();
    await this.firstOpen;
  }

  lastSeq(): number | null {
    return this.received.length ? this.received[this.received.length - 1].seq : null;
  }

  seqs(): number[] {
    return this.received.map((e) => e.seq);
  }

  current(): ConnectionRecord | undefined {
    return this.connections[this.connections.length - 1];
  }

  /** Comments (heartbeats by default) received while `from` <= time <= `to`, over every connection. */
  commentsBetween(from: number, to: number, text = 'heartbeat'): number {
    let n = 0;
    for (const c of this.connections) n += c.comments.filter((x) => x.text === text && x.at >= from && x.at <= to).length;
    return n;
  }

  private notify() {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves when the predicate holds (checked on every event, comment and connection change); rejects after timeoutMs. */
  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${this.opts.name}: timed out waiting for ${what} (received ${this.received.length} events, last ${this.lastSeq()}, ${this.connections.length} connections)`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      const urls = this.opts.urls();
      const base = urls[attempt % urls.length];
      attempt++;
      const lastEventId = this.lastSeq() ?? this.opts.startAfter;
      const record: ConnectionRecord = { url: base, status: 'network-error', lastEventId, end: null, comments: [], events: 0, openedAt: Date.now(), endedAt: null };
      const headers: Record<string, string> = { accept: 'text/event-stream', ...this.opts.headers };
      if (lastEventId !== null) headers['last-event-id'] = String(lastEventId);
      this.ctrl = new AbortController();
      try {
        const res = await fetch(`${base}${this.opts.path ?? '/api/v1/events'}`, { headers, signal: this.ctrl.signal });
        record.status = res.status;
        this.connections.push(record);
        if (res.status !== 200) {
          await res.text().catch(() => undefined);
          record.end = 'eof';
        } else {
          this.resolveFirstOpen();
          this.notify();
          record.end = await this.read(res, record);
        }
      } catch {
        if (!this.connections.includes(record)) this.connections.push(record);
        record.end = this.stopped ? 'closed' : 'error';
      }
      record.endedAt = Date.now();
      this.notify();
      if (!this.stopped) await delay(this.opts.retryMs ?? 100);
    }
  }

  private async read(res: Response, record: ConnectionRecord): Promise<'eof' | 'error' | 'closed'> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const parse = createSseParser();
    const connection = this.connections.length - 1;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return 'eof';
        for (const frame of parse(decoder.decode(value, { stream: true }))) {
          for (const c of frame.comments) record.comments.push({ text: c.split(/[;:]/)[0].trim(), at: Date.now() });
          if (frame.data === null) continue;
          this.received.push({ seq: Number(frame.id), event: frame.event, data: frame.data, json: JSON.parse(frame.data) as Record<string, unknown>, connection });
          record.events++;
        }
        this.notify();
      }
    } catch {
      return this.stopped ? 'closed' : 'error';
    }
  }

  /** Ends the current connection (as if the network cut it); the loop reconnects. */
  cut(): void {
    this.ctrl?.abort();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.ctrl?.abort();
    this.resolveFirstOpen();
    await this.loop;
  }
}

export async function openResilient(opts: ResilientStreamOptions): Promise<ResilientStream> {
  const s = new ResilientStream(opts);
  await s.start();
  return s;
}

// ---- traffic ---------------------------------------------------------------------------------------------------------

export interface Attempt {
  url: string;
  status: number | 'network-error';
  retryAfter: string | null;
  ms: number;
  /** How long the request took. */
  tookMs: number;
  body: string;
  /** For a failed attempt, when TrafficOptions.storedCount is set: how many of the request's events were stored right after it failed. */
  storedAfter?: number;
}

export interface SentRequest {
  org: TestOrg;
  ids: string[];
  attempts: Attempt[];
  /** Set once an attempt answered 200. */
  accepted: number | null;
}

export interface TrafficOptions {
  orgs: TestOrg[];
  /** Instances to post to; each request goes to the next one, and a retry moves on too. */
  urls: () => string[];
  batchSize?: number;
  /** Pause between two requests of one org (pacing, so traffic flows steadily rather than as fast as possible). */
  pauseMs?: number;
  /** Delay before retrying a 503 / 429 / network error (the test's own retry policy; Retry-After is checked, not slept). */
  retryMs?: number;
  /** Sessions per org that the tool calls cycle through (each new one also makes a session_update event). */
  sessions?: number;
  /** Counts how many of these ids the org has stored (read directly from Postgres); checked after every failed attempt. */
  storedCount?: (orgId: string, ids: string[]) => Promise<number>;
}

/**
 * Steady raw-ingest traffic for several orgs: each org posts batches of tool calls with unique idempotency keys, one
 * request at a time, and retries a failed request (same body, same ids) until it is accepted, like a forwarder.
 */
export class Traffic {
  readonly requests: SentRequest[] = [];
  private stopping = false;
  private loops: Promise<void>[] = [];
  private waiters = new Set<() => void>();
  readonly tag = randomBytes(3).toString('hex');
  private n = 0;

  constructor(readonly opts: TrafficOptions) {}

  start(): this {
    this.loops = this.opts.orgs.map((org, k) => this.orgLoop(org, k));
    return this;
  }

  private notify() {
    for (const w of [...this.waiters]) w();
  }

  successes(since = 0): number {
    let n = 0;
    for (const r of this.requests) if (r.accepted !== null && (r.attempts[r.attempts.length - 1]?.ms ?? 0) >= since) n++;
    return n;
  }

  attempts(): Attempt[] {
    return this.requests.flatMap((r) => r.attempts);
  }

  /** Resolves once `n` more requests than now have been accepted. */
  waitForMoreSuccesses(n: number, timeoutMs: number): Promise<void> {
    const target = this.requests.filter((r) => r.accepted !== null).length + n;
    return this.waitFor(() => this.requests.filter((r) => r.accepted !== null).length >= target, timeoutMs, `${n} more accepted requests`);
  }

  /** Resolves once `n` attempts with the given status have been answered after `since` (Date.now()). */
  waitForAttempts(status: number | 'network-error', n: number, since: number, timeoutMs: number): Promise<void> {
    return this.waitFor(() => this.attempts().filter((a) => a.status === status && a.ms >= since).length >= n, timeoutMs, `${n} attempts answered ${status}`);
  }

  private waitFor(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!pred()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`traffic: timed out waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  private async orgLoop(org: TestOrg, k: number): Promise<void> {
    const size = this.opts.batchSize ?? 5;
    const sessions = this.opts.sessions ?? 3;
    let i = 0;
    while (!this.stopping) {
      const reqNo = this.n++;
      const ids = Array.from({ length: size }, (_, j) => `${this.tag}-o${k}-r${reqNo}-e${j}`);
      const body = JSON.stringify(
        ids.map((id, j) => ({ id, serverId: `srv-${(i + j) % 2}`, sessionId: `sess-${(i + j) % sessions}`, toolName: `tool-${j % 3}`, action: 'allow', latencyMs: j, timestamp: new Date().toISOString() })),
      );
      i += size;
      const req: SentRequest = { org, ids, attempts: [], accepted: null };
      this.requests.push(req);
      await this.send(req, body, reqNo);
      this.notify();
      if (!this.stopping) await delay(this.opts.pauseMs ?? 20);
    }
  }

  /** Posts until accepted (or the traffic is stopped with a request still failing: it is then retried until accepted). */
  private async send(req: SentRequest, body: string, reqNo: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const urls = this.opts.urls();
      const url = urls[(reqNo + attempt) % urls.length];
      const t0 = Date.now();
      let a: Attempt;
      try {
        const res = await fetch(`${url}/api/v1/ingest/events`, { method: 'POST', headers: { ...bearer(req.org.key), 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(60_000) });
        const text = await res.text();
        a = { url, status: res.status, retryAfter: res.headers.get('retry-after'), ms: Date.now(), tookMs: Date.now() - t0, body: text.slice(0, 300) };
        req.attempts.push(a);
        if (res.status === 200) {
          req.accepted = (JSON.parse(text) as { accepted: number }).accepted;
          return;
        }
      } catch (err) {
        a = { url, status: 'network-error', retryAfter: null, ms: Date.now(), tookMs: Date.now() - t0, body: String((err as Error).cause ?? err) };
        req.attempts.push(a);
      }
      if (this.opts.storedCount) a.storedAfter = await this.opts.storedCount(req.org.id, req.ids);
      this.notify();
      await delay(this.opts.retryMs ?? 100);
    }
  }

  /** Stops starting new requests; resolves once every request in flight has been accepted. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }
}

// ---- verification ----------------------------------------------------------------------------------------------------

export interface StoredRow {
  seq: number;
  type: string;
  payload: Record<string, unknown> | null;
}

/**
 * A stored row's stream payload, in SQL: tool calls keep none and have it rebuilt from their columns (migration 006);
 * this rebuild is independent of the service's own, so a difference between the two shows.
 */
const STREAM_PAYLOAD_SQL = `CASE WHEN type <> 'tool_call' THEN payload WHEN tool_name IS NOT NULL THEN json_build_object(
  'type', 'tool_call', 'serverId', server_id, 'sessionId', session_id, 'toolName', tool_name, 'action', action, 'latencyMs', latency_ms,
  'timestamp', to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) END`;

/** Reads the org's stored events directly from Postgres (not through the app or any proxy). */
export async function storedEvents(databaseUrl: string, orgId: string): Promise<{ rows: StoredRow[]; counter: number }> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const rows = await c.query<StoredRow>(`SELECT seq::int AS seq, type, ${STREAM_PAYLOAD_SQL} AS payload FROM audit_events WHERE org_id = $1 ORDER BY seq`, [orgId]);
    const counter = await c.query<{ event_seq: string }>('SELECT event_seq FROM organizations WHERE id = $1', [orgId]);
    return { rows: rows.rows, counter: Number(counter.rows[0]?.event_seq ?? 0) };
  } finally {
    await c.end();
  }
}

/** Which of these raw-ingest ids are stored for the org (directly from Postgres). */
export async function storedIds(databaseUrl: string, orgId: string, ids: string[]): Promise<Set<string>> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    // Dedupe keys are stored as digests; a raw event keeps its own id in metadata.id.
    const r = await c.query<{ id: string }>(
      `SELECT metadata->>'id' AS id FROM audit_events
       WHERE org_id = $1 AND dedupe_key IN (SELECT audit_dedupe_digest(k) FROM unnest($2::text[]) AS k)`,
      [orgId, ids.map((id) => `raw:id:${id}`)],
    );
    return new Set(r.rows.map((x) => x.id));
  } finally {
    await c.end();
  }
}

/** How many raw-ingest events the org has stored (with an own id starting with `idPrefix`). */
export async function countRaw(databaseUrl: string, orgId: string, idPrefix = ''): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const r = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND source = 'raw' AND starts_with(metadata->>'id', $2)", [orgId, idPrefix]);
    return r.rows[0].n;
  } finally {
    await c.end();
  }
}

export interface StreamExpectation {
  stream: ResilientStream;
  /** Event types the stream asked for (null: all). */
  types?: string[] | null;
}

/**
 * The invariant, per org: stored seqs are exactly 1..N (and the org counter is N); every stream received every
 * streamed seq after its start exactly once, in order, with the stored payload as data and the type as event name.
 */
export async function checkOrg(databaseUrl: string, orgId: string, streams: StreamExpectation[], timeoutMs = 60_000): Promise<{ stored: number; streamed: number }> {
  const { rows, counter } = await storedEvents(databaseUrl, orgId);
  const seqs = rows.map((r) => r.seq);
  expect(seqs, `org ${orgId}: stored seqs must be gapless`).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  expect(counter, `org ${orgId}: counter`).toBe(seqs.length);
  const streamedRows = rows.filter((r) => r.payload !== null);
  for (const { stream, types } of streams) {
    const expected = streamedRows.filter((r) => r.seq > stream.startAfter && (!types || types.includes(r.type)));
    const last = expected.length ? expected[expected.length - 1].seq : null;
    if (last !== null) await stream.waitFor(() => (stream.lastSeq() ?? 0) >= last, timeoutMs, `seq ${last}`);
    const got = stream.seqs();
    const dupes = got.filter((s, i) => got.indexOf(s) !== i);
    expect(dupes, `${stream.opts.name}: duplicates`).toEqual([]);
    const missing = expected.map((r) => r.seq).filter((s) => !got.includes(s));
    expect(missing, `${stream.opts.name}: missing seqs`).toEqual([]);
    expect(got, `${stream.opts.name}: exactly the streamed seqs, in order`).toEqual(expected.map((r) => r.seq));
    for (let i = 0; i < expected.length; i++) {
      const ev = stream.received[i];
      expect(ev.event).toBe(expected[i].type);
      expect(ev.json).toEqual(expected[i].payload);
    }
  }
  return { stored: seqs.length, streamed: streamedRows.length };
}

/** Every request was eventually accepted, and each of its events is stored exactly once (ids are unique per org). */
export async function checkTrafficStored(databaseUrl: string, traffic: Traffic): Promise<void> {
  for (const org of traffic.opts.orgs) {
    const reqs = traffic.requests.filter((r) => r.org === org);
    for (const r of reqs) expect(r.accepted, `request ${r.ids[0]} accepted`).not.toBeNull();
    const ids = reqs.flatMap((r) => r.ids);
    const stored = await storedIds(databaseUrl, org.id, ids);
    expect(ids.filter((id) => !stored.has(id)), `org ${org.name}: ids never stored`).toEqual([]);
    // A retried request is counted once: the attempt that was accepted counts what the earlier ones had not stored.
    const total = reqs.reduce((n, r) => n + (r.accepted ?? 0), 0);
    expect(total, `org ${org.name}: accepted over all requests`).toBeLessThanOrEqual(ids.length);
    expect(await countRaw(databaseUrl, org.id, `${traffic.tag}-`), `org ${org.name}: raw events stored`).toBe(ids.length);
  }
}

/** Every failed attempt was a 503 with Retry-After, or a connection error (never a 500 or another status). */
export function expectOnly503WithRetryAfter(attempts: Attempt[], allowNetworkErrors = false): void {
  for (const a of attempts) {
    if (a.status === 200) continue;
    if (a.status === 'network-error' && allowNetworkErrors) continue;
    expect({ status: a.status, body: a.body }).toMatchObject({ status: 503 });
    expect(a.retryAfter, `Retry-After on ${a.body}`).toMatch(/^\d+$/);
  }
}

/** Prometheus text -> the value of one sample (first match of name with optional labels). */
export function metric(text: string, name: string): number | null {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

/** A failed attempt stored all of its request or nothing (all: the commit landed but the answer was lost). */
export function expectNoPartialRequests(traffic: Traffic): { checked: number; committedThoughFailed: number } {
  let checked = 0;
  let committedThoughFailed = 0;
  for (const r of traffic.requests) {
    for (const a of r.attempts) {
      if (a.storedAfter === undefined) continue;
      checked++;
      if (a.storedAfter === r.ids.length) committedThoughFailed++;
      expect([0, r.ids.length], `request ${r.ids[0]} after a ${a.status}: ${a.storedAfter} of ${r.ids.length} stored`).toContain(a.storedAfter);
    }
  }
  return { checked, committedThoughFailed };
}

/** Polls a condition that has no event of its own (e.g. an HTTP status), every 100 ms, until it holds or the deadline passes. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(100);
  }
}

/** GET a URL and return its status (0 when the connection fails). */
export async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

export { delay };
