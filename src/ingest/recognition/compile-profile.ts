// Compiles a profile's CEL expressions once (parse, shape check, plan) into functions evaluated per record.
//
// Why evaluation time is bounded although @bufbuild/cel has no cost budget: every expression is at most maxChars long
// with at most maxNodes AST nodes, comprehensions are few and never nested, and the view an expression reads holds at
// most VIEW_LIMITS.maxKeys keys per map and maxItems items per list, strings cut at maxStringChars. What functions build
// at run time (strings, lists) is charged to an EvaluationBudget by the metered functions, so an expression cannot
// grow values past its record's budget; `matches` uses RE2 (linear time). The fast path runs only shapes whose results
// are bounded by the expression's size and the view's bounds (reads, comparisons, concatenation, prefix tests).
import { celEnv, celFunc, celMap, CelScalar, isCelError, isCelUint, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { checkExpressionShape, DEFAULT_EXPRESSION_LIMITS, type ExpressionLimits, type ExpressionShape } from './expression-limits.js';
import { PROFILE_FIELDS, type Profile, type ProfileField } from './profile.js';
import { guardsOf, type Guard } from './profile-guards.js';
import { compileFast, FALLBACK, FastError } from './fast-expressions.js';
import { EvaluationBudget } from './evaluation-budget.js';
import { linearStringFunctions, meteredFunctions } from './metered-functions.js';
import { boundedValue, VIEW_LIMITS, type RecordView } from './record-view.js';

/** A profile expression that does not compile, named by its place (`when`, `fields.tool`). */
export class ProfileCompileError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'ProfileCompileError';
  }
}

/** The result of one expression: a plain value, or `error` when it failed (missing key, wrong type...). */
export type EvalOutcome = { ok: true; value: unknown } | { ok: false; error: string };

export type CompiledExpression = (view: RecordView) => EvalOutcome;

export interface CompiledProfile {
  profile: Profile;
  when: CompiledExpression;
  fields: Partial<Record<ProfileField, CompiledExpression>>;
  /**
   * The most work one evaluation of the whole profile can do, in units of one AST node visited: the sum over its
   * expressions of nodes × (1 + comprehensions × VIEW_LIMITS.maxKeys). Charged against a record's cost budget.
   */
  cost: number;
  /** Conditions of `when` checked on plain strings before it is evaluated (profile-guards.ts). */
  guards: Guard[];
}

/** The cost bound of one expression of this shape (see CompiledProfile.cost). */
export function expressionCost(shape: ExpressionShape): number {
  return shape.nodes * (1 + shape.comprehensions * VIEW_LIMITS.maxKeys);
}

/**
 * `jsonParse(text)`: a JSON object string as a map (an empty map when it is not one), for attributes that carry JSON
 * text (Claude Code's `tool_parameters`); bounded like the view.
 */
const jsonParse = celFunc('jsonParse', [CelScalar.STRING], CelScalar.DYN, (text: string) => {
  if (text.length > VIEW_LIMITS.maxStringChars) return {} as never;
  try {
    const v = boundedValue(JSON.parse(text));
    return (v && typeof v === 'object' && !Array.isArray(v) ? v : {}) as never;
  } catch {
    return {} as never;
  }
});

/**
 * The CEL environment every profile runs in: the standard library, the strings extension (linear `replace` and `join`),
 * jsonParse; every function metered against `budget` (unlimited until a recognizer starts it for a record).
 */
export function profileEnv(budget: EvaluationBudget = new EvaluationBudget()) {
  const unmetered = celEnv({ funcs: [...strings, ...linearStringFunctions(budget), jsonParse] });
  return celEnv({ funcs: meteredFunctions(unmetered, budget) });
}

/** CEL values back to plain JS: ints (bigint) as numbers, maps and lists as plain objects and arrays. */
export function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (isCelUint(v)) return Number(v.value);
  if (v === null || typeof v !== 'object') return v;
  // Maps, lists, bytes and types are no audit field value.
  return null;
}

/** A plain object read as a map (own keys only), without copying it: what @bufbuild/cel's map wraps. */
class ObjectMap implements ReadonlyMap<string, unknown> {
  constructor(private readonly obj: Record<string, unknown>) {}
  get size(): number {
    return Object.keys(this.obj).length;
  }
  get(key: string): unknown {
    return typeof key === 'string' && Object.prototype.hasOwnProperty.call(this.obj, key) ? this.obj[key] : undefined;
  }
  has(key: string): boolean {
    return this.get(key) !== undefined;
  }
  keys(): MapIterator<string> {
    return Object.keys(this.obj)[Symbol.iterator]();
  }
  values(): MapIterator<unknown> {
    return Object.values(this.obj)[Symbol.iterator]();
  }
  entries(): MapIterator<[string, unknown]> {
    return Object.entries(this.obj)[Symbol.iterator]();
  }
  forEach(fn: (value: unknown, key: string, map: ReadonlyMap<string, unknown>) => void): void {
    for (const [k, v] of Object.entries(this.obj)) fn(v, k, this);
  }
  [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }
}

/**
 * The CEL variables of a record, made once per record and shared by every expression evaluated on it. @bufbuild/cel
 * turns a plain object into a map by copying its entries on every read of the variable; each map variable is wrapped
 * once instead (no copy), on its first read.
 */
function bindings(view: RecordView): Record<string, never> {
  if (view.bindings) return view.bindings;
  const maps: Partial<Record<'resource' | 'attributes' | 'span' | 'log', unknown>> = {};
  const map = (key: 'resource' | 'attributes' | 'span' | 'log') => (maps[key] ??= celMap(new ObjectMap(view[key]) as unknown as ReadonlyMap<string, never>));
  const vars = {
    source: view.source,
    kind: view.kind,
    logGroup: view.logGroup,
    name: view.name,
    scope: view.scope,
    body: view.body,
    get resource() {
      return map('resource');
    },
    get attributes() {
      return map('attributes');
    },
    get span() {
      return map('span');
    },
    get log() {
      return map('log');
    },
  };
  view.bindings = vars as unknown as Record<string, never>;
  return view.bindings;
}

/** How expressions are evaluated: `fast` (default) tries the fast path first (fast-expressions.ts), `cel` never does. */
export interface CompileOptions {
  evaluator?: 'fast' | 'cel';
}

function compileExpression(env: ReturnType<typeof profileEnv>, text: string, path: string, limits: ExpressionLimits, opts: CompileOptions): { run: CompiledExpression; cost: number; guards: Guard[] } {
  if (text.length > limits.maxChars) throw new ProfileCompileError(path, `longer than ${limits.maxChars} characters`);
  let parsed;
  try {
    parsed = parse(text);
  } catch (err) {
    throw new ProfileCompileError(path, String((err as Error).message).slice(0, 300));
  }
  let shape: ExpressionShape;
  try {
    shape = checkExpressionShape(parsed.expr, limits);
  } catch (err) {
    throw new ProfileCompileError(path, (err as Error).message);
  }
  let run: (ctx: Record<string, never>) => unknown;
  try {
    run = plan(env, parsed) as unknown as (ctx: Record<string, never>) => unknown;
  } catch (err) {
    throw new ProfileCompileError(path, String((err as Error).message).slice(0, 300));
  }
  const fast = opts.evaluator === 'cel' ? null : compileFast(parsed.expr);
  const evaluate: CompiledExpression = (view) => {
    if (fast) {
      const out = fast(view);
      if (out instanceof FastError) return { ok: false, error: out.message.slice(0, 200) };
      if (out !== FALLBACK) return { ok: true, value: out !== null && typeof out === 'object' ? null : out };
    }
    try {
      const out = run(bindings(view));
      if (isCelError(out)) return { ok: false, error: out.message.slice(0, 200) };
      return { ok: true, value: plainValue(out) };
    } catch (err) {
      return { ok: false, error: String((err as Error)?.message ?? err).slice(0, 200) };
    }
  };
  return { run: evaluate, cost: expressionCost(shape), guards: guardsOf(parsed.expr) };
}

/** Compiles every expression of `profile`; throws ProfileCompileError naming the first that fails. */
export function compileProfile(profile: Profile, limits: ExpressionLimits = DEFAULT_EXPRESSION_LIMITS, env = profileEnv(), opts: CompileOptions = {}): CompiledProfile {
  const fields: CompiledProfile['fields'] = {};
  const when = compileExpression(env, profile.when, 'when', limits, opts);
  let cost = when.cost;
  for (const key of PROFILE_FIELDS) {
    const text = profile.fields[key];
    if (text === undefined) continue;
    const compiled = compileExpression(env, text, `fields.${key}`, limits, opts);
    fields[key] = compiled.run;
    cost += compiled.cost;
  }
  return { profile, when: when.run, fields, cost, guards: when.guards };
}
