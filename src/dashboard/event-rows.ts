// Rows of stored events (the explore results and a session's neighbours): dense, one line each, the whole event in the detail panel.
import { actionKey } from '../audit/action-keys.js';
import { formatTime, h, show } from './dom.js';
import { copyableId, sessionId } from './ids.js';
import type { StoredAuditEvent } from './api.js';
import { cell } from './table.js';

const EXCERPT = 140;

/** A short line of what the event says beyond its columns: the raw message, an anomaly's rate, a session's new status. */
export function eventSummary(e: StoredAuditEvent): string {
  const m = e.metadata;
  if (typeof m.message === 'string') return m.message.length > EXCERPT ? `${m.message.slice(0, EXCERPT)}…` : m.message;
  if (e.type === 'anomaly' && m.windowCount !== undefined) return `${String(m.anomalyType ?? 'anomaly')}: ${String(m.windowCount)} calls in ${String(m.windowSeconds)} s (baseline ${String(m.baseline)}/min)`;
  if (e.type === 'session_update' && typeof m.transition === 'string') return `${m.transition}${typeof m.reason === 'string' && m.reason ? `: ${m.reason}` : ''}`;
  return '';
}

/** One stored event as a table row that opens the detail panel (data-open-seq). */
export function storedEventRow(e: StoredAuditEvent): HTMLTableRowElement {
  const key = actionKey(e.action);
  const summary = eventSummary(e);
  return h(
    'tr',
    { 'data-seq': e.seq, 'data-open-seq': e.seq, 'data-type': e.type, tabindex: 0, title: 'Open this event' },
    cell('Time', { class: 'time', title: e.occurredAt }, formatTime(e.occurredAt)),
    cell('Type', { class: 'kind' }, h('span', { class: `kind-tag kind-${e.type}` }, e.type.replace('_', ' ')), h('span', { class: 'source-tag' }, e.source)),
    cell('Server', { class: 'id' }, copyableId(e.serverId)),
    cell('Session', { class: 'id' }, sessionId(e.sessionId)),
    cell('Tool', { class: 'tool' }, show(e.toolName)),
    cell('Action', { class: 'action-cell' }, e.action === null && e.type !== 'tool_call' ? '—' : h('span', { class: `action action-${key}` }, show(e.action))),
    cell('Latency', { class: 'num' }, e.latencyMs === null ? '—' : `${e.latencyMs} ms`),
    cell('Message', { class: 'summary', title: summary }, summary || '—'),
  );
}
