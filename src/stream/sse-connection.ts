// One SSE client: filters, seq dedupe, shared encoded writes, backpressure and the outgoing buffer limit.
import type { ServerResponse } from 'node:http';
import type { StreamEventType } from '../audit/audit-types.js';
import type { StreamEvent } from '../audit/audit-types.js';
import type { EncodedBatch, FrameFilter, SelectedFrames } from './encoded-batch.js';
import { frameOf } from './sse-format.js';

export interface ConnectionFilter {
  types: Set<StreamEventType> | null;
  serverId: string | null;
}

export interface ConnectionLimits {
  bufferLimitBytes: number;
  drainTimeoutMs: number;
}

export type CloseReason = 'client' | 'slow' | 'drain_timeout' | 'credentials' | 'shutdown' | 'replay_overflow' | 'error';

export interface ConnectionIdentity {
  orgId: string;
  keyId: string | null;
  /** The signed-in user of a cookie login (all of the user's logins share one stream limit). */
  userId: string | null;
  loginSessionId: string | null;
}

export class SseConnection {
  /** Highest seq this client has been sent (or deliberately skipped); anything at or below it is never sent again. */
  private sentSeq = 0;
  /** Live events held while the connection replays from the database (queued until it is ready); null once live. */
  private pending: StreamEvent[] | null = null;
  /** Names this connection's filter ('' for none): connections with equal filters share their encoded frames. */
  readonly filterKey: string;
  /** This connection's filter over an event's type and server; null when it has none. */
  readonly frameFilter: FrameFilter | null;
  private waitingDrain = false;
  private drainTimer: NodeJS.Timeout | null = null;
  private drainWaiters: (() => void)[] = [];
  closed = false;
  closeReason: CloseReason | null = null;
  /** The client asked for the log's signed checkpoints (`checkpoints=true`). */
  wantsCheckpoints = false;

  constructor(
    private readonly res: ServerResponse,
    readonly identity: ConnectionIdentity,
    private readonly filter: ConnectionFilter,
    private readonly limits: ConnectionLimits,
    private readonly onClose: (conn: SseConnection, reason: CloseReason) => void,
    private readonly onDelivered: (n: number) => void,
  ) {
    res.on('close', () => this.finish('client'));
    res.on('error', () => this.finish('error'));
    res.on('drain', () => this.drained());
    const filtered = Boolean(filter.types || filter.serverId);
    this.filterKey = filtered ? JSON.stringify([filter.types ? [...filter.types].sort() : null, filter.serverId]) : '';
    this.frameFilter = filtered ? (type, serverId) => (!filter.types || filter.types.has(type)) && (!filter.serverId || serverId === filter.serverId) : null;
  }

  matches(e: StreamEvent): boolean {
    return !this.frameFilter || this.frameFilter(e.type, e.serverId);
  }

  /** Continues after `seq`: nothing at or below it is sent (the start of a live stream, or a replay window's start). */
  skipTo(seq: number): void {
    if (seq > this.sentSeq) this.sentSeq = seq;
  }

  /** Starts holding live events (during replay). */
  hold(): void {
    this.pending = [];
  }

  /**
   * One page of replay from the database, covering every seq up to `throughSeq` (rows that are not streamed included):
   * sends its events that are new and match as one write and returns how many it sent. Not counted as live deliveries.
   */
  sendReplayed(events: readonly StreamEvent[], throughSeq: number): number {
    let chunk = '';
    let n = 0;
    for (const e of events) {
      if (e.seq <= this.sentSeq || !this.matches(e)) continue;
      chunk += frameOf(e).frame;
      n++;
    }
    this.skipTo(throughSeq);
    if (chunk) this.write(chunk);
    return n;
  }

  /**
   * Frames from the organization's recent window, already chosen for this filter, covering every seq up to `through`:
   * written as they are (shared bytes) when the client resumes. Not counted as live deliveries.
   */
  sendFrames(frames: SelectedFrames, through: number): void {
    this.skipTo(through);
    if (frames.count > 0) this.write(frames.buffer);
  }

  /** Live events from the org feed, in seq order; `encoded` holds their frames as bytes shared by every connection. */
  deliver(events: StreamEvent[], encoded?: EncodedBatch): void {
    if (this.closed) return;
    if (this.pending) {
      for (const e of events) this.pending.push(e);
      if (this.pending.length > 100_000) this.close('replay_overflow');
      return;
    }
    this.send(events, encoded);
  }

  /** Sends events above sentSeq that match the filters, as one write. */
  private send(events: StreamEvent[], encoded?: EncodedBatch): void {
    if (encoded && events.length > 0 && events[0].seq > this.sentSeq) {
      // The usual case, the whole run is new: write the bytes shared by every connection with this filter (all events
      // when there is none) instead of building and encoding a copy of its own.
      this.sentSeq = events[events.length - 1].seq;
      const { buffer, count } = this.frameFilter ? encoded.select(this.filterKey, this.frameFilter) : { buffer: encoded.buffer, count: events.length };
      if (count > 0) {
        this.write(buffer);
        this.onDelivered(count);
      }
      return;
    }
    let chunk = '';
    let n = 0;
    for (const e of events) {
      if (e.seq <= this.sentSeq) continue;
      this.sentSeq = e.seq;
      if (!this.matches(e)) continue;
      chunk += frameOf(e).frame;
      n++;
    }
    if (n > 0) {
      this.write(chunk);
      this.onDelivered(n);
    }
  }

  /** Ends replay: sends the held live events past what replay sent, then goes live. */
  goLive(): void {
    const held = this.pending ?? [];
    this.pending = null;
    this.send(held);
  }

  /**
   * Writes a chunk, honouring the buffer limit. The backlog is what the socket has not taken yet. A chunk is counted
   * before it is handed over: while the socket is full (the client has fallen behind), one that would take the backlog
   * past the limit cuts the client instead (it resumes by id). While the socket takes what it is given, a chunk of any
   * size goes out, so one large batch (or replay page) is no reason to cut a client that keeps up. A client that stopped
   * reading thus holds at most the limit plus one chunk, and that chunk is shared with the other connections.
   */
  write(chunk: string | Buffer): void {
    if (this.closed) return;
    if (this.waitingDrain && this.res.writableLength + (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length) > this.limits.bufferLimitBytes) {
      this.close('slow');
      return;
    }
    if (!this.res.write(chunk) && !this.waitingDrain) {
      this.waitingDrain = true;
      this.drainTimer = setTimeout(() => this.close('drain_timeout'), this.limits.drainTimeoutMs);
      this.drainTimer.unref();
    }
  }

  /** Resolves when the socket can take more (used to pace replay pages). */
  whenWritable(): Promise<void> {
    if (!this.waitingDrain || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private drained(): void {
    if (this.closed) return;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.waitingDrain = false;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  /** Ends the stream: an optional last comment, then the response ends (or is destroyed when the client is stuck). */
  close(reason: CloseReason, lastWords?: string): void {
    if (this.closed) return;
    if (reason === 'slow' || reason === 'drain_timeout' || reason === 'replay_overflow') {
      this.finish(reason);
      this.res.destroy();
      return;
    }
    if (lastWords && !this.waitingDrain) this.res.write(lastWords);
    this.finish(reason);
    this.res.end();
  }

  private finish(reason: CloseReason): void {
    if (this.closed) return;
    this.closed = true;
    this.closeReason = reason;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.pending = null;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
    this.onClose(this, reason);
  }
}
