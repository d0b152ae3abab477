// Turns a spike alert into its stored, streamed `anomaly` event, and suspends the driving sessions when the org asks for it.
import { randomUUID } from 'node:crypto';
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { EventLog } from '../audit/event-log/event-log.js';
import { suspendActiveSessions, type TransitionActor } from '../sessions/session-service.js';
import { round2 } from './detector.js';
import type { SpikeAlert } from './spike-monitor.js';

export const DETECTOR_PRINCIPAL = 'anomaly-detector';

/**
 * The anomaly event: metadata with the figures behind it (its stream payload, src/contract/stream-payloads.ts, is read
 * from them: anomalyType, currentRate, threshold) and the sessions that drove it.
 */
export function anomalyEvent(alert: SpikeAlert, suspendedSessions?: string[]): NewAuditEvent {
  const { evaluation: ev, settings: s } = alert;
  return {
    type: 'anomaly',
    source: 'system',
    occurredAt: alert.at,
    serverId: alert.serverId,
    toolName: alert.toolName,
    metadata: {
      anomalyType: 'rate_spike',
      currentRate: round2(ev.currentRate),
      threshold: round2(ev.threshold),
      rateUnit: 'calls/min',
      windowSeconds: s.windowSeconds,
      windowCount: ev.windowCount,
      baseline: round2(ev.baseline),
      minRate: s.minRate,
      multiplier: s.multiplier,
      cooldownSeconds: s.cooldownSeconds,
      sessions: alert.sessions,
      ...(suspendedSessions ? { suspendedSessions } : {}),
    },
    dedupeKey: `anomaly:rate_spike:${randomUUID()}`,
  };
}

/**
 * Stores the alert. With suspendSessionsOnSpike, one transaction (under the org's seq lock, like operator transitions)
 * suspends the driving sessions that are still active and appends the anomaly followed by their session_updates.
 */
export async function emitAnomaly(log: EventLog, alert: SpikeAlert): Promise<void> {
  if (!alert.settings.suspendSessionsOnSpike || alert.sessions.length === 0) {
    await log.append(alert.orgId, [anomalyEvent(alert)], { internal: true });
    return;
  }
  const actor: TransitionActor = {
    by: DETECTOR_PRINCIPAL,
    source: 'system',
    reason: `rate spike of ${alert.toolName} on ${alert.serverId ?? '(no server)'}: ${round2(alert.evaluation.currentRate)} calls/min > threshold ${round2(alert.evaluation.threshold)}`,
  };
  await log.appendChecked(alert.orgId, async (tx) => {
    const { suspended, events } = await suspendActiveSessions(tx, alert.orgId, alert.sessions, actor, new Date());
    return { events: [anomalyEvent(alert, suspended), ...events], result: undefined };
  }, { internal: true });
}
