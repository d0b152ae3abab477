// One organization's feed on this instance: its connections (attach/detach), replay, in-order live delivery, and gap
// filling from the database, with one paged reader of stored seq ranges for both.
import type { Logger } from 'pino';
import type { PublishedBatch, StreamEvent } from '../audit/audit-types.js';
import { currentSeq, readStreamRange } from '../audit/audit-repo.js';
import type { DataTransport, Subscription } from '../bus/data-transport.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import type { SseConnection } from './sse-connection.js';
import { EncodedFrames, comment } from './sse-format.js';

const PAGE = 1000;
const SUBSCRIBE_WAIT_MS = 2000;

export interface OrgFeedDeps {
  db: Db;
  transport: DataTransport;
  logger: Logger;
  metrics: Metrics;
  /** The most events one reconnect replays (SSE_REPLAY_LIMIT); older ones are announced by a `reset` comment. */
  replayLimit: number;
}

export class OrgFeed {
  /** Every seq up to this one has been handed, in order, to the connections. */
  private delivered = 0;
  private readonly connections = new Set<SseConnection>();
  readonly ready: Promise<void>;
  private chain: Promise<void> = Promise.resolve();
  private subscription: Subscription;
  /** Set when a gap could not be filled (database down); the periodic catch-up retries. */
  private behind = false;

  constructor(
    readonly orgId: string,
    private readonly deps: OrgFeedDeps,
  ) {
    this.subscription = deps.transport.subscribe(orgId, (batch) => this.onBatch(batch));
    this.ready = this.enqueue(async () => {
      // Wait for the subscription, but not forever: while the broker is down, catch-up polling keeps the feed current.
      await Promise.race([this.subscription.ready.catch(() => undefined), new Promise((r) => setTimeout(r, SUBSCRIBE_WAIT_MS).unref())]);
      this.delivered = await currentSeq(deps.db, orgId);
    });
  }

  /** Every seq up to this one has been delivered, in order, to the attached connections. */
  get lastSeq(): number {
    return this.delivered;
  }

  /** How many connections are attached. */
  get size(): number {
    return this.connections.size;
  }

  get isBehind(): boolean {
    return this.behind;
  }

  /**
   * Attaches a connection whose response is open. Without `lastEventId` it goes live from now on; with one, it first
   * gets the stored events after it (bounded by the replay window, a `reset` comment saying what was skipped) at its
   * own pace, while live events wait in its queue, then goes live. A replay that fails closes the connection (the
   * client resumes by id).
   */
  async attach(conn: SseConnection, lastEventId: number | null): Promise<void> {
    this.connections.add(conn);
    if (lastEventId === null) {
      conn.skipTo(this.delivered);
      return;
    }
    conn.hold();
    try {
      const upTo = Math.max(this.delivered, await currentSeq(this.deps.db, this.orgId));
      await this.replay(conn, lastEventId, upTo);
      conn.goLive();
    } catch (err) {
      this.deps.logger.warn({ err: { message: (err as Error).message }, orgId: this.orgId }, 'replay failed; closing stream so the client retries');
      conn.close('error', comment('replay failed; reconnect to resume'));
    }
  }

  /** Detaches a connection (it has closed); true when none is left. */
  detach(conn: SseConnection): boolean {
    this.connections.delete(conn);
    return this.connections.size === 0;
  }

  /** Sends stored events (after, upTo] to one connection, page by page at its pace. */
  private async replay(conn: SseConnection, after: number, upTo: number): Promise<void> {
    const limit = this.deps.replayLimit;
    if (after > upTo) {
      conn.write(comment(`reset: Last-Event-ID ${after} is ahead of this organization's latest event ${upTo}; continuing live`));
      conn.skipTo(upTo);
      return;
    }
    let from = after;
    if (upTo - after > limit) {
      from = upTo - limit;
      conn.write(comment(`reset: events ${after + 1}..${from} are beyond the replay window of ${limit}; read them from /api/v1/audit-events. Continuing from ${from + 1}`));
    }
    conn.skipTo(from);
    // Stored seqs have no holes but where retention removed the oldest ones: a page that does not start right after
    // what was sent (or an empty one) means they are gone. Say so, never skip them silently; the check is per page, so
    // a removal that runs during the replay is announced too.
    let sent = from;
    for await (const page of this.pages(from, upTo, () => conn.closed)) {
      const first = page.firstSeq ?? page.lastSeq + 1;
      if (first > sent + 1) conn.write(comment(`reset: events ${sent + 1}..${first - 1} are no longer kept (retention). Continuing from ${first}`));
      this.deps.metrics.eventsReplayed.inc(conn.sendReplayed(page.events, page.lastSeq));
      sent = page.lastSeq;
      await conn.whenWritable();
    }
  }

  /** The one reader of stored seq ranges: (after, upTo] page by page, oldest first, until done or `stop()`. */
  private async *pages(after: number, upTo: number, stop: () => boolean = () => false): AsyncGenerator<{ events: StreamEvent[]; firstSeq: number | null; lastSeq: number }> {
    let from = after;
    while (from < upTo && !stop()) {
      const page = await readStreamRange(this.deps.db, this.orgId, from, upTo, PAGE);
      from = page.lastSeq;
      yield page;
    }
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.chain.then(task);
    this.chain = run.catch((err: Error) => {
      this.behind = true;
      this.deps.logger.warn({ err: { message: err.message, code: (err as { code?: string }).code }, orgId: this.orgId }, 'feed update failed; will catch up');
    });
    return run;
  }

  private onBatch(batch: PublishedBatch): void {
    void this.enqueue(async () => {
      if (batch.lastSeq <= this.delivered) return;
      if (batch.firstSeq > this.delivered + 1) await this.fill(batch.firstSeq - 1);
      this.deliver(batch.events.filter((e) => e.seq > this.delivered));
      this.delivered = batch.lastSeq;
    }).catch(() => undefined);
  }

  /** Reads (delivered, upTo] from the database and delivers it; `delivered` advances page by page. */
  private async fill(upTo: number): Promise<void> {
    this.deps.metrics.gapFills.inc();
    for await (const page of this.pages(this.delivered, upTo)) {
      this.deps.metrics.gapFilledEvents.inc(page.events.length);
      this.deliver(page.events);
      this.delivered = page.lastSeq;
    }
  }

  private deliver(events: StreamEvent[]): void {
    if (events.length === 0) return;
    // Serialized and encoded once for every connection, and once per distinct filter.
    const encoded = new EncodedFrames(events);
    for (const c of this.connections) c.deliver(events, encoded);
  }

  /** Brings the feed up to the database's current seq (after a bus reconnect, a failed fill, or periodically). */
  catchUp(force = false): Promise<void> {
    return this.enqueue(async () => {
      const cur = await currentSeq(this.deps.db, this.orgId);
      if (cur > this.delivered) {
        if (!force && !this.behind) this.deps.logger.info({ orgId: this.orgId, from: this.delivered, to: cur }, 'feed caught up from database');
        await this.fill(cur);
      }
      this.behind = false;
    }).catch(() => undefined);
  }

  /** Leaves the org's bus channel (the hub closes the connections). */
  close(): void {
    this.subscription.unsubscribe();
  }
}
