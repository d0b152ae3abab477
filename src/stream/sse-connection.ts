// One SSE client: filters, seq dedupe, coalesced writes, backpressure and the outgoing buffer limit.
import type { ServerResponse } from 'node:http';
import type { StreamEventType } from '../audit/audit-types.js';
import { frameOf, type EncodedFrames, type FramedEvent } from './sse-format.js';
import type { StreamEvent } from '../audit/audit-types.js';

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
  lastSentSeq = 0;
  /** Live events held while the connection replays from the database; null once live. */
  private pending: StreamEvent[] | null = null;
  private queued: (string | Buffer)[] = [];
  private queuedBytes = 0;
  private waitingDrain = false;
  private drainTimer: NodeJS.Timeout | null = null;
  private drainWaiters: (() => void)[] = [];
  closed = false;
  closeReason: CloseReason | null = null;

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
    res.on('drain', () => this.flushQueued());
  }

  matches(e: StreamEvent): boolean {
    return (!this.filter.types || this.filter.types.has(e.type)) && (!this.filter.serverId || e.serverId === this.filter.serverId);
  }

  /** Starts holding live events (during replay). */
  hold(): void {
    this.pending = [];
  }

  /** Live events from the org feed, in seq order; `encoded` holds their frames as bytes shared by every connection. */
  deliver(events: StreamEvent[], encoded?: EncodedFrames): void {
    if (this.closed) return;
    if (this.pending) {
      for (const e of events) this.pending.push(e);
      if (this.pending.length > 100_000) this.close('replay_overflow');
      return;
    }
    this.send(events, encoded);
  }

  /** Sends events above lastSentSeq that match the filters, as one write. */
  send(events: StreamEvent[], encoded?: EncodedFrames): void {
    if (encoded && events.length > 0 && !this.filter.types && !this.filter.serverId && events[0].seq > this.lastSentSeq) {
      // The usual case, every event goes out unchanged: write the shared bytes instead of building and encoding a copy.
      this.lastSentSeq = events[events.length - 1].seq;
      this.write(encoded.buffer);
      this.onDelivered(events.length);
      return;
    }
    let chunk = '';
    let n = 0;
    for (const e of events) {
      if (e.seq <= this.lastSentSeq) continue;
      this.lastSentSeq = e.seq;
      if (!this.matches(e)) continue;
      chunk += (frameOf(e) as FramedEvent).frame;
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
   * Writes a chunk, honouring backpressure: while the socket is full, chunks queue. A client whose backlog (bytes already
   * queued and not yet taken by the socket) is over the buffer limit when more arrives is cut; it resumes by id. The
   * backlog is measured before the new chunk, so one large batch to a client that keeps up is not a reason to cut it.
   */
  write(chunk: string | Buffer): void {
    if (this.closed) return;
    if (this.queuedBytes + this.res.writableLength > this.limits.bufferLimitBytes) {
      this.close('slow');
      return;
    }
    if (this.waitingDrain) {
      this.queued.push(chunk);
      this.queuedBytes += Buffer.byteLength(chunk);
      return;
    }
    if (!this.res.write(chunk)) {
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

  private flushQueued(): void {
    if (this.closed) return;
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.waitingDrain = false;
    const chunk = this.queued.length === 1 ? this.queued[0] : Buffer.concat(this.queued.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
    this.queued = [];
    this.queuedBytes = 0;
    if (chunk.length > 0 && !this.res.write(chunk)) {
      this.waitingDrain = true;
      this.drainTimer = setTimeout(() => this.close('drain_timeout'), this.limits.drainTimeoutMs);
      this.drainTimer.unref();
    }
    if (!this.waitingDrain) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
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
    this.queued = [];
    this.pending = null;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
    this.onClose(this, reason);
  }
}
