// One organization's feed on this instance: its connections (attach/detach), in-order live delivery, gap filling from the
// database, and resumes: from the recent window of delivered frames when it covers them, else replayed from the database
// (one paged reader of stored seq ranges serves replays and gap fills).
import type { Logger } from 'pino';
import type { PublishedBatch, StreamEvent } from '../audit/audit-types.js';
import { currentSeq, readStreamRange, removedThroughSeq } from '../audit/audit-repo.js';
import type { DataTransport, Subscription } from '../bus/data-transport.js';
import type { Db } from '../db/db.js';
import type { ReadReplica } from '../db/read-replica.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import type { Metrics } from '../metrics/metrics.js';
import { EncodedBatch } from './encoded-batch.js';
import { RecentWindow } from './recent-window.js';
import type { SseConnection } from './sse-connection.js';
import { comment } from './sse-format.js';

const PAGE = 1000;
const SUBSCRIBE_WAIT_MS = 2000;

export interface OrgFeedDeps {
  /** The primary: gap fills and catch-up read it (they must see what was just committed). */
  db: Db;
  /** Replays read here first (a replica within its lag bound); a page it cannot give in full is read from the primary. */
  replica: ReadReplica;
  transport: DataTransport;
  logger: Logger;
  metrics: Metrics;
  /** The most events one reconnect replays (SSE_REPLAY_LIMIT); older ones are announced by a `reset` comment. */
  replayLimit: number;
  /** The organization's read slots: every page of stored events is read in one, waiting its turn. */
  reads: OrgReadSlots;
  /** Most bytes of one page of stored events (READ_PAGE_MAX_BYTES, at most SSE_BUFFER_LIMIT_BYTES). */
  pageMaxBytes: number;
  /** The most bytes of recently delivered frames kept for resumes (the org's share, see the hub); 0 keeps none. */
  recentWindowBytes: number;
}

export class OrgFeed {
  /** Every seq up to this one has been handed, in order, to the connections. */
  private delivered = 0;
  private readonly connections = new Set<SseConnection>();
  /** The attached connections live batches are handed to (or held for, during a replay from the database). */
  private readonly live = new Set<SseConnection>();
  /** The frames of what was delivered lately: every streamed event of a seq range that ends at `delivered`. */
  private readonly window: RecentWindow;
  readonly ready: Promise<void>;
  private chain: Promise<void> = Promise.resolve();
  private subscription: Subscription;
  /** Set when a gap could not be filled (database down); the periodic catch-up retries. */
  private behind = false;

  constructor(
    readonly orgId: string,
    private readonly deps: OrgFeedDeps,
  ) {
    this.window = new RecentWindow(deps.recentWindowBytes, (delta) => deps.metrics.recentWindowBytes.inc(delta));
    this.subscription = deps.transport.subscribe(orgId, (batch) => this.onBatch(batch));
    this.ready = this.enqueue(async () => {
      // Wait for the subscription, but not forever: while the broker is down, catch-up polling keeps the feed current.
      await Promise.race([this.subscription.ready.catch(() => undefined), new Promise((r) => setTimeout(r, SUBSCRIBE_WAIT_MS).unref())]);
      this.delivered = await currentSeq(deps.db, orgId);
      this.window.reset(this.delivered);
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

  /** Sets the most bytes the recent window may hold (dropping its oldest batches at once if it holds more). */
  setWindowLimit(bytes: number): void {
    this.window.setLimit(bytes);
  }

  /**
   * Attaches a connection whose response is open. Without `lastEventId` it goes live from now on. With one, it first
   * gets the events after it at its own pace, then goes live: from the recent window when it covers the id (no database
   * read), else from the database (bounded by the replay limit, a `reset` comment saying what was skipped), while live
   * events wait in its queue. A replay that fails closes the connection (the client resumes by id).
   */
  async attach(conn: SseConnection, lastEventId: number | null): Promise<void> {
    this.connections.add(conn);
    if (lastEventId === null) {
      conn.skipTo(this.delivered);
      this.live.add(conn);
      return;
    }
    if (this.servedFromWindow(lastEventId)) {
      await this.resumeFromWindow(conn, lastEventId);
      return;
    }
    await this.resumeFromDatabase(conn, lastEventId);
  }

  /** Whether a stream resuming after `lastEventId` would read stored events (and so needs a turn in the read slots). */
  readsStored(lastEventId: number | null): boolean {
    return lastEventId !== null && lastEventId < this.delivered && !this.servedFromWindow(lastEventId);
  }

  /** Whether a resume after `lastEventId` is served from the recent window (no database read). */
  private servedFromWindow(lastEventId: number): boolean {
    return this.window.covers(lastEventId) && this.delivered - lastEventId <= this.deps.replayLimit;
  }

  /** Detaches a connection (it has closed); true when none is left. */
  detach(conn: SseConnection): boolean {
    this.connections.delete(conn);
    this.live.delete(conn);
    return this.connections.size === 0;
  }

  /**
   * Sends the window's frames after `after`, batch by batch at the connection's pace, and goes live in the same turn
   * as it reaches the delivered seq (nothing can be delivered in between). Live batches are not held meanwhile: the
   * window holds them. Should the window drop the next batch before the connection has taken it, the rest comes from
   * the database.
   */
  private async resumeFromWindow(conn: SseConnection, after: number): Promise<void> {
    this.deps.metrics.resumes.inc({ from: 'memory' });
    conn.skipTo(after);
    let sent = after;
    for (;;) {
      if (conn.closed) return;
      if (sent >= this.delivered) {
        this.live.add(conn);
        return;
      }
      const step = this.window.next(sent, conn.filterKey, conn.frameFilter);
      if (!step) {
        await this.resumeFromDatabase(conn, sent);
        return;
      }
      conn.sendFrames(step.frames, step.through);
      this.deps.metrics.eventsReplayed.inc({ from: 'memory' }, step.frames.count);
      sent = step.through;
      await conn.whenWritable();
    }
  }

  /** Replays the stored events after `after` (up to the database's latest seq) while holding live ones, then goes live. */
  private async resumeFromDatabase(conn: SseConnection, after: number): Promise<void> {
    this.deps.metrics.resumes.inc({ from: 'database' });
    conn.hold();
    this.live.add(conn);
    try {
      const stored = await this.deps.reads.run(this.orgId, () => currentSeq(this.deps.db, this.orgId), { continues: true });
      const upTo = Math.max(this.delivered, stored);
      await this.replay(conn, after, upTo);
      conn.goLive();
    } catch (err) {
      this.deps.logger.warn({ err: { message: (err as Error).message }, orgId: this.orgId }, 'replay failed; closing stream so the client retries');
      conn.close('error', comment('replay failed; reconnect to resume'));
    }
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
    // Seqs retention removed are announced, never skipped silently (per page, so a removal during the replay is too).
    for await (const page of this.pages(from, upTo, () => conn.closed, true)) {
      if (page.removed) conn.write(comment(`reset: events ${page.removed[0]}..${page.removed[1]} are no longer kept (retention). Continuing from ${page.removed[1] + 1}`));
      this.deps.metrics.eventsReplayed.inc({ from: 'database' }, conn.sendReplayed(page.events, page.lastSeq));
      // Written: while the client drains, the connection holds the page's bytes only, not its events.
      page.events = [];
      await conn.whenWritable();
    }
  }

  /**
   * The one reader of stored seq ranges: (after, upTo] page by page (rows and bytes), oldest first, until done or
   * `stop()`, each page read in one of the organization's read slots. Each page
   * covers up to `lastSeq`: the highest seq it read, or the end of a run of seqs retention removed (`removed`). Seqs
   * missing and not removed by retention are not readable here yet: it throws, and the caller tries again later (a
   * replay closes the stream, which resumes by id; a gap fill is retried by catch-up). With `fromReplica`, each page
   * is read from the replica first; one that does not start at the next seq (the replica has not replayed it yet: an
   * organization's seqs commit in order, so a replica holds a prefix of them) is read again from the primary, so a
   * lagging replica never makes a stream skip or repeat an event.
   */
  private async *pages(after: number, upTo: number, stop: () => boolean = () => false, fromReplica = false): AsyncGenerator<{ events: StreamEvent[]; removed: [number, number] | null; lastSeq: number }> {
    const primary = this.deps.db;
    let from = after;
    while (from < upTo && !stop()) {
      const read = (db: Db) => this.deps.reads.run(this.orgId, () => readStreamRange(db, this.orgId, from, upTo, PAGE, this.deps.pageMaxBytes), { continues: true });
      let source = primary;
      let page = fromReplica
        ? await this.deps.replica.run(async (db) => {
            source = db;
            return read(db);
          })
        : await read(primary);
      if (source !== primary && (page.firstSeq ?? upTo + 1) > from + 1) {
        source = primary;
        page = await read(primary);
      }
      if (page.cutByBytes) this.deps.metrics.pagesCutByBytes.inc();
      const first = page.firstSeq ?? upTo + 1;
      let removed: [number, number] | null = null;
      if (first > from + 1) {
        const through = Math.min(await this.deps.reads.run(this.orgId, () => removedThroughSeq(source, this.orgId), { continues: true }), first - 1);
        if (through <= from) throw new Error(`events ${from + 1}..${first - 1} of the organization are not readable yet`);
        removed = [from + 1, through];
        if (through < first - 1) {
          yield { events: [], removed, lastSeq: through };
          from = through;
          continue;
        }
      }
      const lastSeq = page.lastSeq ?? removed![1];
      yield { events: page.events, removed, lastSeq };
      from = lastSeq;
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
      this.deliver(batch.events.filter((e) => e.seq > this.delivered), batch.lastSeq);
    }).catch(() => undefined);
  }

  /** Reads (delivered, upTo] from the database and delivers it; `delivered` advances page by page. */
  private async fill(upTo: number): Promise<void> {
    this.deps.metrics.gapFills.inc();
    for await (const page of this.pages(this.delivered, upTo)) {
      this.deps.metrics.gapFilledEvents.inc(page.events.length);
      this.deliver(page.events, page.lastSeq);
    }
  }

  /**
   * Delivers the range (delivered, through], whose streamed events (in seq order) are `events`, and makes it the
   * delivered seq. Encoded once for every connection (and once per distinct filter); kept in the recent window.
   */
  private deliver(events: StreamEvent[], through: number): void {
    const encoded = events.length ? new EncodedBatch(events) : null;
    this.window.append(encoded, this.delivered, through);
    this.delivered = through;
    if (!encoded) return;
    for (const c of this.live) c.deliver(events, encoded);
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

  /** Leaves the org's bus channel and lets the window go (the hub closes the connections). */
  close(): void {
    this.subscription.unsubscribe();
    this.window.clear();
  }
}
