// One organization's live feed on this instance: bus subscription, in-order delivery, and gap filling from the database.
import type { Logger } from 'pino';
import type { PublishedBatch, StreamEvent } from '../audit/audit-types.js';
import { currentSeq, readStreamRange } from '../audit/audit-repo.js';
import type { Bus, Subscription } from '../bus/bus.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import type { SseConnection } from './sse-connection.js';
import { EncodedFrames } from './sse-format.js';

const FILL_PAGE = 1000;
const SUBSCRIBE_WAIT_MS = 2000;

export interface OrgFeedDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  metrics: Metrics;
}

export class OrgFeed {
  /** Every seq up to this one has been handed, in order, to the connections. */
  lastSeq = 0;
  readonly connections = new Set<SseConnection>();
  readonly ready: Promise<void>;
  private chain: Promise<void> = Promise.resolve();
  private subscription: Subscription;
  /** Set when a gap could not be filled (database down); the periodic catch-up retries. */
  private behind = false;

  constructor(
    readonly orgId: string,
    private readonly deps: OrgFeedDeps,
  ) {
    this.subscription = deps.bus.subscribe(orgId, (batch) => this.onBatch(batch));
    this.ready = this.enqueue(async () => {
      // Wait for the subscription, but not forever: while the broker is down, catch-up polling keeps the feed current.
      await Promise.race([this.subscription.ready.catch(() => undefined), new Promise((r) => setTimeout(r, SUBSCRIBE_WAIT_MS).unref())]);
      this.lastSeq = await currentSeq(deps.db, orgId);
    });
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
      if (batch.lastSeq <= this.lastSeq) return;
      if (batch.firstSeq > this.lastSeq + 1) await this.fill(batch.firstSeq - 1);
      this.deliver(batch.events.filter((e) => e.seq > this.lastSeq));
      this.lastSeq = batch.lastSeq;
    }).catch(() => undefined);
  }

  /** Reads (lastSeq, upTo] from the database and delivers it; lastSeq advances page by page. */
  private async fill(upTo: number): Promise<void> {
    this.deps.metrics.gapFills.inc();
    while (this.lastSeq < upTo) {
      const page = await readStreamRange(this.deps.db, this.orgId, this.lastSeq, upTo, FILL_PAGE);
      this.deps.metrics.gapFilledEvents.inc(page.events.length);
      this.deliver(page.events);
      this.lastSeq = page.lastSeq;
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
      if (cur > this.lastSeq) {
        if (!force && !this.behind) this.deps.logger.info({ orgId: this.orgId, from: this.lastSeq, to: cur }, 'feed caught up from database');
        await this.fill(cur);
      }
      this.behind = false;
    }).catch(() => undefined);
  }

  get isBehind(): boolean {
    return this.behind;
  }

  close(): void {
    this.subscription.unsubscribe();
  }
}
