// One request's recognition: the organization's own profiles first (within the per-record cost budget), then the
// built-in ones; what nothing read is tallied by source and name (bounded) for the unrecognized report.
import type { CompiledProfile } from './compile-profile.js';
import type { EvaluationBudget } from './evaluation-budget.js';
import { recognize, type Recognized } from './recognize.js';
import type { RecordView } from './record-view.js';

/** Records of one source and name that no profile read and that were not stored as tool calls, with one sample. */
export interface UnrecognizedTally {
  source: string;
  name: string;
  count: number;
  sample: string;
}

export interface RecognizerOptions {
  /** The organization's own profiles, in order. */
  org: readonly CompiledProfile[];
  /** The built-in profiles, tried after the organization's. */
  builtin: readonly CompiledProfile[];
  /** RECOGNITION_MAX_COST_PER_RECORD: what the organization's profiles may cost on one record (CompiledProfile.cost). */
  maxCostPerRecord: number;
  /** The budget the profiles' environment charges its functions' work to (started for the organization's profiles only). */
  budget?: EvaluationBudget;
  /** RECOGNITION_MAX_WORK_PER_RECORD: the run-time work (characters and entries made and read) of the organization's profiles on one record. */
  maxWorkPerRecord?: number;
  /** RECOGNITION_MAX_WORK_PER_REQUEST: the same summed over one request's records; once spent, its later records go to the built-in profiles. */
  maxWorkPerRequest?: number;
  /** Distinct (source, name) pairs tallied per request; later ones are counted under the name `(other)`. */
  maxNames: number;
  /** RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES: the longest sample kept (UTF-8 bytes). */
  sampleBytes: number;
}

export interface Recognizer {
  /** The first profile that reads the record, or null (the generic reading applies). */
  read(view: RecordView): Recognized | null;
  /** Counts a record no profile read and the generic reading did not make a tool call; `sample` is made only when needed. */
  unrecognized(view: RecordView, sample: () => string): void;
  /** Expression failures so far (each made its record fall through). */
  failures(): number;
  /** The tallies of this request. */
  tallies(): UnrecognizedTally[];
}

const MAX_NAME_CHARS = 200;
export const OTHER_NAME = '(other)';

/** `text` cut to at most `bytes` UTF-8 bytes (never inside a character). */
export function cutToBytes(text: string, bytes: number): string {
  if (text.length <= bytes / 3) return text;
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  let end = bytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/**
 * The name a record is tallied under: span or event name (the Datadog title), else log group (the Datadog service),
 * else the instrumentation scope (an OTLP log record without an event name), else `(none)`.
 */
export function nameOfView(view: RecordView): string {
  const name = view.name || view.logGroup || view.scope || '(none)';
  return name.length > MAX_NAME_CHARS ? name.slice(0, MAX_NAME_CHARS) : name;
}

export function createRecognizer(opts: RecognizerOptions): Recognizer {
  const tallies = new Map<string, UnrecognizedTally>();
  let failures = 0;
  let requestWorkLeft = opts.maxWorkPerRequest ?? Infinity;
  const own = (view: RecordView) => {
    const budget = opts.budget;
    if (!budget) return recognize(view, opts.org, opts.maxCostPerRecord);
    budget.start(Math.max(0, Math.min(opts.maxWorkPerRecord ?? Infinity, requestWorkLeft)));
    try {
      return recognize(view, opts.org, opts.maxCostPerRecord);
    } finally {
      requestWorkLeft -= budget.stop();
    }
  };
  return {
    read(view) {
      if (opts.org.length) {
        const outcome = own(view);
        failures += outcome.failures.length;
        if (outcome.recognized) return outcome.recognized;
      }
      const builtin = recognize(view, opts.builtin);
      failures += builtin.failures.length;
      return builtin.recognized;
    },
    unrecognized(view, sample) {
      let name = nameOfView(view);
      let key = `${view.source}\u0000${name}`;
      if (!tallies.has(key) && tallies.size >= opts.maxNames) {
        name = OTHER_NAME;
        key = `${view.source}\u0000${name}`;
      }
      const hit = tallies.get(key);
      if (hit) hit.count++;
      else tallies.set(key, { source: view.source, name, count: 1, sample: cutToBytes(sample(), opts.sampleBytes) });
    },
    failures: () => failures,
    tallies: () => [...tallies.values()],
  };
}
