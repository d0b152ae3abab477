// Watches committed tool calls off the ingest path: counts them per (org, server, tool) in batches, evaluates, and lets one alert through per cooldown.
import type { Logger } from 'pino';
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { AnomalySettings } from './anomaly-schemas.js';
import { evaluate, type Evaluation } from './detector.js';
import { MAX_TRACKED_SESSIONS, type RateCounter } from './rate-counter.js';
import { nextTurn } from '../shared/event-loop-turns.js';

/** A spike that passed the gate: the one alert of its key for this cooldown. */
export interface SpikeAlert {
  orgId: string;
  serverId: string | null;
  toolName: string;
  /** When the calls that crossed the threshold arrived. */
  at: Date;
  evaluation: Evaluation;
  settings: AnomalySettings;
  /** Sessions of the key's calls within the window, sorted. */
  sessions: string[];
}

export interface SpikeMonitorDeps {
  counter: RateCounter;
  settingsOf(orgId: string): Promise<AnomalySettings>;
  /** Stores and publishes the alert (and suspends its sessions when the org wants that). */
  emit(alert: SpikeAlert): Promise<void>;
  logger: Logger;
  now: () => number;
  /** Pending keys held at most while evaluation lags (e.g. Redis is down); more are dropped and logged. */
  maxPendingKeys?: number;
}

interface Pending {
  orgId: string;
  serverId: string | null;
  toolName: string;
  key: string;
  atMs: number;
  count: number;
  sessions: Set<string>;
}

/** The counter key of (org, server, tool): each part URI-encoded, so no two triples share a key. */
export function counterKey(orgId: string, serverId: string | null, toolName: string): string {
  return `${orgId}:${serverId === null ? '' : `s${encodeURIComponent(serverId)}`}:${encodeURIComponent(toolName)}`;
}

const LOG_INTERVAL_MS = 30_000;

/**
 * Calls are counted at their arrival, whatever their timestamp says; but a call that happened more than this long
 * before it arrived is a backfill (old logs replayed), not live traffic, and is not counted. An hour leaves room for
 * forwarder delays (a Firehose buffer holds up to 15 minutes, plus retries).
 */
export const MAX_LATENESS_MS = 3_600_000;

export function createSpikeMonitor(deps: SpikeMonitorDeps) {
  const maxPending = deps.maxPendingKeys ?? 10_000;
  let pending = new Map<string, Pending>();
  let running: Promise<void> | null = null;
  let closed = false;
  let dropped = 0;
  let lastLog = 0;

  function logFailure(err: unknown, msg: string): void {
    const t = Date.now();
    if (t - lastLog < LOG_INTERVAL_MS) return;
    lastLog = t;
    deps.logger.error({ err: { message: (err as Error)?.message ?? String(err) } }, msg);
  }

  /** The after-commit listener: synchronous and cheap; groups tool calls by key and arrival second, then schedules a drain. */
  function observe(orgId: string, stored: NewAuditEvent[]): void {
    if (closed) return;
    const atMs = deps.now();
    const second = Math.floor(atMs / 1000);
    for (const e of stored) {
      if (e.type !== 'tool_call' || !e.toolName) continue;
      if (atMs - e.occurredAt.getTime() > MAX_LATENESS_MS) continue;
      const serverId = e.serverId || null;
      const key = counterKey(orgId, serverId, e.toolName);
      const slot = `${key}@${second}`;
      let p = pending.get(slot);
      if (!p) {
        if (pending.size >= maxPending) {
          dropped++;
          continue;
        }
        p = { orgId, serverId, toolName: e.toolName, key, atMs, count: 0, sessions: new Set() };
        pending.set(slot, p);
      }
      p.count++;
      if (e.sessionId && p.sessions.size < MAX_TRACKED_SESSIONS) p.sessions.add(e.sessionId);
    }
    if (pending.size > 0 && !running) running = drain();
  }

  async function drain(): Promise<void> {
    // Yield first, so a commit's own response is not delayed by this work.
    await nextTurn();
    try {
      while (pending.size > 0) {
        const work = [...pending.values()];
        pending = new Map();
        if (dropped > 0) {
          deps.logger.warn({ dropped }, 'anomaly detection fell behind; tool calls were left uncounted');
          dropped = 0;
        }
        await evaluateAll(work).catch((err) => logFailure(err, 'anomaly evaluation failed'));
      }
    } finally {
      running = null;
    }
  }

  async function evaluateAll(work: Pending[]): Promise<void> {
    const settings = new Map<string, Promise<AnomalySettings>>();
    for (const w of work) if (!settings.has(w.orgId)) settings.set(w.orgId, deps.settingsOf(w.orgId));
    const outcomes = await Promise.allSettled(work.map(async (w) => evaluateOne(w, await settings.get(w.orgId)!)));
    for (const o of outcomes) {
      if (o.status === 'rejected') logFailure(o.reason, 'anomaly evaluation failed');
    }
    // Alerts are emitted one by one, in the order their calls were committed.
    for (const o of outcomes) {
      if (o.status !== 'fulfilled' || !o.value) continue;
      await deps.emit(o.value).catch((err) => logFailure(err, 'storing an anomaly failed'));
    }
  }

  async function evaluateOne(w: Pending, s: AnomalySettings): Promise<SpikeAlert | null> {
    const obs = await deps.counter.record(w.key, { nowMs: w.atMs, count: w.count, windowSeconds: s.windowSeconds, sessions: [...w.sessions] });
    const evaluation = evaluate(obs, w.atMs, s);
    if (!evaluation.spike) return null;
    const cooldownMs = Math.max(1, s.cooldownSeconds) * 1000;
    if (!(await deps.counter.tryOpenAlertGate(w.key, w.atMs, cooldownMs))) return null;
    const sessions = await deps.counter.recentSessions(w.key, w.atMs, s.windowSeconds);
    return { orgId: w.orgId, serverId: w.serverId, toolName: w.toolName, at: new Date(w.atMs), evaluation, settings: s, sessions: sessions.sort() };
  }

  /** Resolves once everything observed so far has been evaluated and its alerts emitted. */
  async function idle(): Promise<void> {
    while (running) await running;
  }

  return {
    observe,
    idle,
    /** Stops observing and waits (at most timeoutMs) for the evaluation in progress. */
    async close(timeoutMs = 5000): Promise<void> {
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}

export type SpikeMonitor = ReturnType<typeof createSpikeMonitor>;
