// Runs compiled profiles over one record view, in order: the first whose `when` is true and whose every field
// expression evaluates reads the record. An expression that fails never fails the request: the record falls through to
// the next profile and the failure is counted.
import { mapAction, type Action } from '../normalize/actions.js';
import type { CompiledExpression, CompiledProfile } from './compile-profile.js';
import { parseAnyTimestamp, parseDurationMs } from './key-words.js';
import type { RecordView } from './record-view.js';
import { passesGuards } from './profile-guards.js';

const MAX_ID = 200;
const MAX_LATENCY_MS = 2_147_483_647;

/** What a profile read from a record. */
export interface Recognized {
  profileId: string;
  profileVersion: number;
  /** False when the profile claims the record as a log row, not a tool call. */
  toolCall: boolean;
  toolName: string | null;
  action: Action | null;
  /** The word the action was read from, as found (also an unmapped word, then `action` is null and this is rawAction). */
  actionWord: string | null;
  rawAction: string | null;
  serverId: string | null;
  sessionId: string | null;
  latencyMs: number | null;
  /** The emitter's time; when it sent none (or 0), the record's own time, then when it was received. */
  occurredAt: Date;
  /** The emitter's time as the profile read it; null when it gave none (occurredAt is then a fallback). */
  emitterTime: Date | null;
  traceId: string | null;
  toolCallId: string | null;
}

export interface ProfileFailure {
  profileId: string;
  /** `when` or `fields.<name>`. */
  expression: string;
  error: string;
}

export interface RecognitionOutcome {
  recognized: Recognized | null;
  /** Expressions that failed on this record (each made the record fall through to the next profile). */
  failures: readonly ProfileFailure[];
}

function text(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t ? t.slice(0, MAX_ID) : null;
}

function latency(v: unknown): number | null {
  const ms = parseDurationMs(v);
  return ms !== null && ms <= MAX_LATENCY_MS ? ms : null;
}

/** The record's own time when the emitter's is absent: the log record's time, its observed time, the span start, receipt. */
function fallbackTime(view: RecordView): Date {
  const ms = view.log.timeMs || view.log.observedMs || view.span.startMs || view.receivedMs;
  return new Date(ms);
}

type Values = Partial<Record<string, unknown>>;

const NO_FAILURES: ProfileFailure[] = Object.freeze([]) as unknown as ProfileFailure[];

function readFields(profile: CompiledProfile, view: RecordView, fail: (f: ProfileFailure) => void): Values | null {
  const values: Values = {};
  for (const [name, fn] of Object.entries(profile.fields) as [string, CompiledExpression][]) {
    const out = fn(view);
    if (!out.ok) {
      fail({ profileId: profile.profile.id, expression: `fields.${name}`, error: out.error });
      return null;
    }
    values[name] = out.value;
  }
  return values;
}

function toRecognized(profile: CompiledProfile, view: RecordView, v: Values): Recognized {
  const word = text(v.action);
  const mapped = word === null ? { action: null, rawAction: null } : mapAction(word);
  const time = parseAnyTimestamp(v.time);
  return {
    profileId: profile.profile.id,
    profileVersion: profile.profile.version,
    toolCall: v.toolCall === undefined ? true : v.toolCall === true,
    toolName: text(v.tool),
    action: mapped.action,
    actionWord: text(v.actionWord) ?? (mapped.action ? word : null),
    rawAction: mapped.rawAction,
    serverId: text(v.server),
    sessionId: text(v.session),
    latencyMs: latency(v.latencyMs),
    occurredAt: time ?? fallbackTime(view),
    emitterTime: time,
    traceId: text(v.traceId),
    toolCallId: text(v.callId),
  };
}

/**
 * The first profile that reads `view`, or null (then the generic heuristics apply), with every expression failure.
 * `maxCost`: the record's cost budget (CompiledProfile.cost summed over the profiles evaluated; a profile skipped by
 * its guards costs nothing); a profile that would pass it is not evaluated, nor any after it (counted as a failure
 * `cost`), and the record falls through.
 */
export function recognize(view: RecordView, profiles: readonly CompiledProfile[], maxCost = Infinity): RecognitionOutcome {
  // Most records fail nothing: the list is made on the first failure.
  let failures: ProfileFailure[] = NO_FAILURES;
  const fail = (f: ProfileFailure) => {
    if (failures === NO_FAILURES) failures = [];
    failures.push(f);
  };
  let spent = 0;
  for (const profile of profiles) {
    // A profile whose guards the record fails is not evaluated, and costs nothing.
    if (!passesGuards(profile.guards, view)) continue;
    spent += profile.cost;
    if (spent > maxCost) {
      fail({ profileId: profile.profile.id, expression: 'cost', error: `the record's evaluation cost budget (${maxCost}) is spent` });
      break;
    }
    const when = profile.when(view);
    if (!when.ok) {
      fail({ profileId: profile.profile.id, expression: 'when', error: when.error });
      continue;
    }
    if (when.value !== true) continue;
    const values = readFields(profile, view, fail);
    if (values) return { recognized: toRecognized(profile, view, values), failures };
  }
  return { recognized: null, failures };
}
