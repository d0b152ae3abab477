// All SSE streams of this instance: org feeds (reference-counted), limits, replay, heartbeats, credential checks, shutdown.
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { currentSeq, oldestStoredSeq, readStreamRange } from '../audit/audit-repo.js';
import type { AuthRepo } from '../auth/auth-repo.js';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import { TooManyRequestsError } from '../http/errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { OrgFeed } from './org-feed.js';
import { SseConnection, type CloseReason, type ConnectionFilter, type ConnectionIdentity } from './sse-connection.js';
import { comment, frameOf, retryLine } from './sse-format.js';

const REPLAY_PAGE = 1000;
const CATCH_UP_MS = 5000;

export interface StreamHubDeps {
  config: Config;
  db: Db;
  bus: Bus;
  authRepo: AuthRepo;
  logger: Logger;
  metrics: Metrics;
}

export interface OpenStreamOptions {
  identity: ConnectionIdentity;
  filter: ConnectionFilter;
  lastEventId: number | null;
}

export function createStreamHub(deps: StreamHubDeps) {
  const { config, metrics, logger } = deps;
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

  function feedFor(orgId: string): OrgFeed {
    let feed = feeds.get(orgId);
    if (!feed) {
      feed = new OrgFeed(orgId, deps);
      feeds.set(orgId, feed);
    }
    return feed;
  }

  function releaseFeed(orgId: string) {
    const feed = feeds.get(orgId);
    if (feed && feed.connections.size === 0) {
      feed.close();
      feeds.delete(orgId);
    }
  }

  /** Throws 429 when a connection limit would be exceeded. */
  function checkLimits(identity: ConnectionIdentity) {
    const reject = (limit: string, message: string) => {
      metrics.streamsRejected.inc({ limit });
      throw new TooManyRequestsError(message, 5);
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
    feed?.connections.delete(conn);
    releaseFeed(conn.identity.orgId);
    updateGauges();
  }

  /** Sends stored events after `after` (bounded by the replay window), page by page at the client's pace. */
  async function replay(conn: SseConnection, orgId: string, after: number, upTo: number) {
    let from = after;
    if (after > upTo) {
      conn.write(comment(`reset: Last-Event-ID ${after} is ahead of this organization's latest event ${upTo}; continuing live`));
      conn.lastSentSeq = upTo;
      return;
    }
    if (upTo - after > config.SSE_REPLAY_LIMIT) {
      from = upTo - config.SSE_REPLAY_LIMIT;
      conn.write(comment(`reset: events ${after + 1}..${from} are beyond the replay window of ${config.SSE_REPLAY_LIMIT}; read them from /api/v1/audit-events. Continuing from ${from + 1}`));
    }
    if (from < upTo) {
      // Events before the oldest stored one were removed by retention: say so, never skip them silently.
      const oldest = (await oldestStoredSeq(deps.db, orgId)) ?? upTo + 1;
      if (oldest > from + 1) {
        const resumeAfter = Math.min(oldest - 1, upTo);
        conn.write(comment(`reset: events ${from + 1}..${resumeAfter} are no longer kept (retention). Continuing from ${resumeAfter + 1}`));
        from = resumeAfter;
      }
    }
    conn.lastSentSeq = from;
    while (from < upTo && !conn.closed) {
      const page = await readStreamRange(deps.db, orgId, from, upTo, REPLAY_PAGE);
      let chunk = '';
      let n = 0;
      for (const e of page.events) {
        if (!conn.matches(e)) continue;
        chunk += frameOf(e).frame;
        n++;
      }
      from = page.lastSeq;
      conn.lastSentSeq = from;
      if (chunk) conn.write(chunk);
      metrics.eventsReplayed.inc(n);
      await conn.whenWritable();
    }
  }

  /** Opens a stream on an already hijacked response: headers, retry, replay when asked, then live. */
  async function open(res: ServerResponse, headers: Record<string, string | number | string[]>, opts: OpenStreamOptions): Promise<void> {
    checkLimits(opts.identity);
    const feed = feedFor(opts.identity.orgId);
    try {
      await feed.ready;
    } catch (err) {
      releaseFeed(opts.identity.orgId);
      throw err;
    }
    // Re-check: limits may have filled while waiting for the feed.
    try {
      checkLimits(opts.identity);
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
    connections.add(conn);
    feed.connections.add(conn);
    bump(perOrg, opts.identity.orgId, 1);
    bump(perKey, opts.identity.keyId, 1);
    bump(perUser, opts.identity.userId, 1);
    updateGauges();

    res.writeHead(200, headers);
    res.socket?.setNoDelay(true);
    conn.write(retryLine(config.SSE_RETRY_MS));

    if (opts.lastEventId === null) {
      conn.lastSentSeq = feed.lastSeq;
      return;
    }
    conn.hold();
    try {
      const upTo = Math.max(feed.lastSeq, await currentSeq(deps.db, opts.identity.orgId));
      await replay(conn, opts.identity.orgId, opts.lastEventId, upTo);
      conn.goLive();
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message }, orgId: opts.identity.orgId }, 'replay failed; closing stream so the client retries');
      conn.close('error', comment('replay failed; reconnect to resume'));
    }
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

  const recheck = setInterval(async () => {
    const keyIds = new Set<string>();
    const sessionIds = new Set<string>();
    for (const c of connections) {
      if (c.identity.keyId) keyIds.add(c.identity.keyId);
      if (c.identity.loginSessionId) sessionIds.add(c.identity.loginSessionId);
    }
    if (keyIds.size === 0 && sessionIds.size === 0) return;
    try {
      const bad = await deps.authRepo.invalidCredentials([...keyIds], [...sessionIds]);
      if (bad.size) closeWhere((c) => bad.has(c.identity.keyId ?? '') || bad.has(c.identity.loginSessionId ?? ''), 'credentials', 'credentials revoked or expired');
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message } }, 'credential recheck failed');
    }
  }, config.AUTH_RECHECK_MS);
  recheck.unref();

  deps.bus.onResubscribed(() => {
    metrics.busReconnects.inc();
    for (const feed of feeds.values()) void feed.catchUp(true);
  });
  deps.bus.onControl((m) => {
    if (m.kind === 'revoke_key') closeWhere((c) => c.identity.keyId === m.keyId, 'credentials', 'API key revoked');
    if (m.kind === 'end_login') closeWhere((c) => c.identity.loginSessionId === m.loginSessionId, 'credentials', 'signed out');
  });

  return {
    open,
    /** Ends every stream cleanly (clients reconnect elsewhere and resume by id) and stops timers. */
    shutdown() {
      shuttingDown = true;
      clearInterval(heartbeat);
      clearInterval(catchUp);
      clearInterval(recheck);
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
