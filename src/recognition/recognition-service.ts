// Recognition for the whole service: the built-in profiles compiled once, each organization's own profiles compiled
// and cached per instance (a change is broadcast on the control channel so every instance drops its copy), a
// Recognizer per request, and the unrecognized tallies stored after each request.
import type { Logger } from 'pino';
import type { ControlChannel } from '../bus/control-channel.js';
import type { Db } from '../db/db.js';
import { BUILTIN_PROFILES } from '../ingest/recognition/builtin-profiles.js';
import { compileProfile, profileEnv, type CompiledProfile } from '../ingest/recognition/compile-profile.js';
import { EvaluationBudget } from '../ingest/recognition/evaluation-budget.js';
import { DEFAULT_EXPRESSION_LIMITS, type ExpressionLimits } from '../ingest/recognition/expression-limits.js';
import type { Profile } from '../ingest/recognition/profile.js';
import { createRecognizer, type Recognizer } from '../ingest/recognition/recognizer.js';
import { nextTurn } from '../shared/event-loop-turns.js';
import { listProfiles } from './profiles-repo.js';
import { addUnrecognized } from './unrecognized-repo.js';

export interface RecognitionSettings {
  /** RECOGNITION_BUILTIN_PROFILES */
  builtinProfiles: boolean;
  /** RECOGNITION_MAX_PROFILES_PER_ORG */
  maxProfilesPerOrg: number;
  /** RECOGNITION_MAX_EXPRESSION_CHARS */
  maxExpressionChars: number;
  /** RECOGNITION_MAX_EXPRESSION_NODES */
  maxExpressionNodes: number;
  /** RECOGNITION_MAX_COST_PER_RECORD */
  maxCostPerRecord: number;
  /** RECOGNITION_MAX_WORK_PER_RECORD */
  maxWorkPerRecord: number;
  /** RECOGNITION_MAX_WORK_PER_REQUEST */
  maxWorkPerRequest: number;
  /** RECOGNITION_PROFILE_CACHE_MS */
  cacheMs: number;
  /** RECOGNITION_UNRECOGNIZED_MAX_NAMES */
  unrecognizedMaxNames: number;
  /** RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES */
  sampleBytes: number;
}

export interface RecognitionDeps {
  db: Db;
  control: Pick<ControlChannel, 'publish' | 'on' | 'onResubscribed'>;
  logger: Logger;
  settings: RecognitionSettings;
  /** Organizations whose compiled profiles are kept at most (least recently used dropped). */
  maxOrgs?: number;
}

/** Distinct (source, name) pairs one request tallies; more are counted under `(other)`. */
export const MAX_NAMES_PER_REQUEST = 100;

export interface Recognition {
  /** The built-in profiles, compiled (none with RECOGNITION_BUILTIN_PROFILES=false). */
  builtin: readonly CompiledProfile[];
  /** Compiles a profile within the expression settings; throws ProfileCompileError naming the expression. */
  compile(profile: Profile): CompiledProfile;
  /** The organization's own profiles, compiled (cached). */
  orgProfiles(orgId: string): Promise<readonly CompiledProfile[]>;
  /** A recognizer for one request of the organization: its own profiles, then the built-in ones. */
  recognizerFor(orgId: string): Promise<Recognizer>;
  /** A recognizer over the given organization profiles (the test endpoint's). */
  recognizerWith(org: readonly CompiledProfile[]): Recognizer;
  /** Stores what the request's recognizer tallied as unrecognized (after its events are stored; a failure is logged). */
  record(orgId: string, recognizer: Recognizer): Promise<void>;
  /** Tells every instance (this one included) that the organization's profiles changed. */
  changed(orgId: string): Promise<void>;
}

export function createRecognition(deps: RecognitionDeps): Recognition {
  const { settings } = deps;
  const limits: ExpressionLimits = { ...DEFAULT_EXPRESSION_LIMITS, maxChars: settings.maxExpressionChars, maxNodes: settings.maxExpressionNodes };
  // One budget for the instance's one environment: evaluation is synchronous, so one record's profiles run alone on it.
  const budget = new EvaluationBudget();
  const env = profileEnv(budget);
  const builtin = settings.builtinProfiles ? BUILTIN_PROFILES.map((p) => compileProfile(p, DEFAULT_EXPRESSION_LIMITS, env)) : [];
  const maxOrgs = deps.maxOrgs ?? 10_000;
  const cache = new Map<string, { profiles: CompiledProfile[]; loadedAt: number }>();
  const loading = new Map<string, Promise<CompiledProfile[]>>();
  /** Each organization's last unrecognized write in flight (removed once it is the last and done). */
  const writing = new Map<string, Promise<void>>();
  deps.control.on('recognition_profiles_changed', (m) => cache.delete(m.orgId));
  deps.control.onResubscribed(() => cache.clear());

  const compile = (profile: Profile) => compileProfile(profile, limits, env);

  async function load(orgId: string): Promise<CompiledProfile[]> {
    const stored = await listProfiles(deps.db, orgId, settings.maxProfilesPerOrg);
    const out: CompiledProfile[] = [];
    for (const [i, s] of stored.entries()) {
      // One profile per turn of the event loop: compiling an organization's profiles takes up to a second.
      if (i > 0) await nextTurn();
      try {
        out.push(compile(s.profile));
      } catch (err) {
        // Its bounds were lowered since it was added: it is skipped until changed.
        deps.logger.warn({ orgId, profile: s.profile.id, reason: (err as Error).message }, 'recognition profile no longer compiles; skipped');
      }
    }
    return out;
  }

  async function orgProfiles(orgId: string): Promise<CompiledProfile[]> {
    const hit = cache.get(orgId);
    if (hit && Date.now() - hit.loadedAt < settings.cacheMs) return hit.profiles;
    let pending = loading.get(orgId);
    if (!pending) {
      pending = load(orgId).finally(() => loading.delete(orgId));
      loading.set(orgId, pending);
    }
    const profiles = await pending;
    cache.delete(orgId);
    cache.set(orgId, { profiles, loadedAt: Date.now() });
    if (cache.size > maxOrgs) cache.delete(cache.keys().next().value!);
    return profiles;
  }

  const recognizerWith = (org: readonly CompiledProfile[]) =>
    createRecognizer({
      org,
      builtin,
      budget,
      maxCostPerRecord: settings.maxCostPerRecord,
      maxWorkPerRecord: settings.maxWorkPerRecord,
      maxWorkPerRequest: settings.maxWorkPerRequest,
      maxNames: MAX_NAMES_PER_REQUEST, sampleBytes: settings.sampleBytes });

  return {
    builtin,
    compile,
    orgProfiles,
    async recognizerFor(orgId) {
      return recognizerWith(await orgProfiles(orgId));
    },
    recognizerWith,
    async record(orgId, recognizer) {
      const tallies = recognizer.tallies();
      if (!tallies.length) return;
      // After the events are committed: a report that cannot be written is logged, never fails the stored request. An
      // organization's writes go one after another on this instance, so they wait here, not holding a pool connection
      // while they wait for the organization's lock.
      const write = async () => {
        try {
          await addUnrecognized(deps.db, orgId, tallies, settings.unrecognizedMaxNames);
        } catch (err) {
          deps.logger.warn({ orgId, err: { message: (err as Error).message } }, 'unrecognized records could not be counted');
        }
      };
      const mine = (writing.get(orgId) ?? Promise.resolve()).then(write);
      writing.set(orgId, mine);
      try {
        await mine;
      } finally {
        if (writing.get(orgId) === mine) writing.delete(orgId);
      }
    },
    async changed(orgId) {
      cache.delete(orgId);
      await deps.control.publish({ kind: 'recognition_profiles_changed', orgId });
    },
  };
}
