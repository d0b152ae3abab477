// All SSE streams of this instance: org feeds (one per org with streams), connection limits, heartbeats, shutdown.
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AuthRepo } from '../auth/auth-repo.js';
import { watchStreamCredentials } from '../auth/stream-credentials.js';
import type { ControlChannel } from '../bus/control-channel.js';
import type { DataTransport } from '../bus/data-transport.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { ReadReplica } from '../db/read-replica.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { OrgFeed } from './org-feed.js';
import { SseConnection, type CloseReason, type ConnectionFilter, type ConnectionIdentity } from './sse-connection.js';
import { checkpointFrame, comment, retryLine } from './sse-format.js';
import { RateLimited } from '../shared/domain-errors.js';

const CATCH_UP_MS = 5000;

export interface StreamHubDeps {
  config: Config;
  db: Db;
  /** Where replays of stored events read first (a replica within its lag bound); what it lacks is read from `db`. */
  replica: ReadReplica;
  transport: DataTransport;
  control: ControlChannel;
  authRepo: AuthRepo;
  logger: Logger;
  metrics: Metrics;
  /** The organizations' read slots: replay and gap-fill pages are read in them; a replay starts only when there is room. */
  reads: OrgReadSlots;
}

export interface OpenStreamOptions {
  identity: ConnectionIdentity;
  filter: ConnectionFilter;
  lastEventId: number | null;
  /** Send the organization's signed checkpoints as `checkpoint` events as they are issued. */
  checkpoints?: boolean;
}

export function createStreamHub(deps: StreamHubDeps) {
  const { config, metrics } = deps;
  const feeds = new Map<string, OrgFeed>();
  const connections = new Set<SseConnection>();
  const perOrg = new Map<string, number>();
  const perKey = new Map<string, number>();
  const perUser = new Map<string, number>();
  let shuttingDown = false;

  const bump = (m: Map<string, number>, k: string | null, d: number) => {
    if (!k) return;
    const v = (m.get(k) ?? 0) + d;
    if (v <= 0) m.delete(k);
    else m.set(k, v);
  };

  function updateGauges() {
    metrics.streamsOpen.set(connections.size);
    metrics.streamOrgs.set(feeds.size);
  }

  /**
   * Each organization's recent window may hold SSE_RECENT_WINDOW_BYTES, and all of them together
   * SSE_RECENT_WINDOW_TOTAL_BYTES: with more organizations streaming than that allows, they share it equally.
   */
  const windowShare = () => Math.min(config.SSE_RECENT_WINDOW_BYTES, Math.floor(config.SSE_RECENT_WINDOW_TOTAL_BYTES / Math.max(1, feeds.size)));

  function feedFor(orgId: string): OrgFeed {
    let feed = feeds.get(orgId);
    if (!feed) {
      feed = new OrgFeed(orgId, {
        db: deps.db,
        replica: deps.replica,
        transport: deps.transport,
        logger: deps.logger,
        metrics,
        replayLimit: config.SSE_REPLAY_LIMIT,
        reads: deps.reads,
        // A replay page is written only once the client has taken the previous one: one no larger than the buffer limit
        // keeps what a client that stopped reading holds under SSE_BUFFER_LIMIT_BYTES, replay or live.
        pageMaxBytes: Math.min(config.READ_PAGE_MAX_BYTES, config.SSE_BUFFER_LIMIT_BYTES),
        // Its window's share is set with the others' (each organization streaming here shrinks every share).
        recentWindowBytes: 0,
      });
      feeds.set(orgId, feed);
      shareWindows();
    }
    return feed;
  }

  /** Gives every feed's window its share (the others shrink at once when one more organization streams). */
  function shareWindows() {
    const share = windowShare();
    for (const f of feeds.values()) f.setWindowLimit(share);
  }

  function releaseFeed(orgId: string) {
    const feed = feeds.get(orgId);
    if (feed && feed.size === 0) {
      feed.close();
      feeds.delete(orgId);
      shareWindows();
    }
  }

  /** Throws 429 when a connection limit would be exceeded. */
  function checkLimits(identity: ConnectionIdentity) {
    const reject = (limit: string, message: string) => {
      metrics.streamsRejected.inc({ limit });
      throw new RateLimited(message, 5);
    };
    if (shuttingDown) reject('shutdown', 'this instance is shutting down');
    if (connections.size >= config.SSE_MAX_STREAMS_TOTAL) reject('instance', 'too many open streams on this instance');
    if ((perOrg.get(identity.orgId) ?? 0) >= config.SSE_MAX_STREAMS_PER_ORG) reject('organization', 'too many open streams for this organization');
    if (identity.keyId && (perKey.get(identity.keyId) ?? 0) >= config.SSE_MAX_STREAMS_PER_KEY) reject('api_key', 'too many open streams for this API key');
    if (identity.userId && (perUser.get(identity.userId) ?? 0) >= config.SSE_MAX_STREAMS_PER_USER) reject('user', 'too many open streams for this user');
  }

  function onClose(conn: SseConnection, reason: CloseReason) {
    if (!connections.delete(conn)) return;
    metrics.streamsClosed.inc({ reason });
    if (reason === 'slow' || reason === 'drain_timeout') metrics.slowClientDisconnects.inc();
    bump(perOrg, conn.identity.orgId, -1);
    bump(perKey, conn.identity.keyId, -1);
    bump(perUser, conn.identity.userId, -1);
    const feed = feeds.get(conn.identity.orgId);
    if (feed?.detach(conn)) releaseFeed(conn.identity.orgId);
    updateGauges();
  }

  /** Opens a stream on an already hijacked response: headers, retry, then the org's feed (replay when asked, live). */
  async function open(res: ServerResponse, headers: Record<string, string | number | string[]>, opts: OpenStreamOptions): Promise<void> {
    checkLimits(opts.identity);
    const feed = feedFor(opts.identity.orgId);
    try {
      await feed.ready;
      // Re-check: limits may have filled while waiting for the feed.
      checkLimits(opts.identity);
      // A stream that will replay stored events starts only while its organization's read queue has room (else 429
      // with Retry-After: the client comes back later, and misses nothing); its pages then wait their turn.
      if (feed.readsStored(opts.lastEventId) && !deps.reads.admits(opts.identity.orgId)) {
        metrics.streamsRejected.inc({ limit: 'organization_reads' });
        deps.reads.admit(opts.identity.orgId);
      }
    } catch (err) {
      releaseFeed(opts.identity.orgId);
      throw err;
    }
    const conn = new SseConnection(
      res,
      opts.identity,
      opts.filter,
      { bufferLimitBytes: config.SSE_BUFFER_LIMIT_BYTES, drainTimeoutMs: config.SSE_DRAIN_TIMEOUT_MS },
      onClose,
      (n) => metrics.eventsDelivered.inc(n),
    );
    conn.wantsCheckpoints = opts.checkpoints === true;
    connections.add(conn);
    bump(perOrg, opts.identity.orgId, 1);
    bump(perKey, opts.identity.keyId, 1);
    bump(perUser, opts.identity.userId, 1);
    updateGauges();

    res.writeHead(200, headers);
    res.socket?.setNoDelay(true);
    conn.write(retryLine(config.SSE_RETRY_MS));
    await feed.attach(conn, opts.lastEventId);
  }

  function closeWhere(pred: (c: SseConnection) => boolean, reason: CloseReason, text: string) {
    for (const c of [...connections]) if (pred(c)) c.close(reason, comment(text));
  }

  const heartbeat = setInterval(() => {
    const hb = comment('heartbeat');
    for (const c of connections) c.write(hb);
  }, config.SSE_HEARTBEAT_MS);
  heartbeat.unref();

  const catchUp = setInterval(() => {
    for (const feed of feeds.values()) void feed.catchUp();
  }, CATCH_UP_MS);
  catchUp.unref();

  const credentials = watchStreamCredentials(
    { authRepo: deps.authRepo, control: deps.control, logger: deps.logger, recheckMs: config.AUTH_RECHECK_MS },
    {
      credentials: () => [...connections].map((c) => c.identity),
      end: (bad, why) => closeWhere((c) => bad(c.identity), 'credentials', why),
    },
  );

  // A checkpoint issued on any instance reaches the streams here that asked for checkpoints.
  deps.control.on('checkpoint', (m) => {
    const frame = checkpointFrame(m);
    for (const c of connections) if (c.wantsCheckpoints && c.identity.orgId === m.orgId) c.write(frame);
  });

  deps.transport.onResubscribed(() => {
    metrics.busReconnects.inc();
    for (const feed of feeds.values()) void feed.catchUp(true);
  });

  return {
    open,
    /** Ends every stream cleanly (clients reconnect elsewhere and resume by id) and stops timers. */
    shutdown() {
      shuttingDown = true;
      clearInterval(heartbeat);
      clearInterval(catchUp);
      credentials.stop();
      closeWhere(() => true, 'shutdown', 'server shutting down; reconnect to resume');
      for (const feed of feeds.values()) feed.close();
      feeds.clear();
    },
    stats() {
      return { connections: connections.size, feeds: feeds.size };
    },
  };
}

export type StreamHub = ReturnType<typeof createStreamHub>;
