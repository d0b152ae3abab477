// Policy rules as CEL conditions (@bufbuild/cel): compiled once with bounded size, evaluated first-match-wins, never throwing.
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

export const POLICY_ACTIONS = ['allow', 'deny', 'flag', 'redact'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** A rule as stored. */
export interface PolicyRule {
  ruleId: string;
  name: string;
  condition: string;
  action: PolicyAction;
  reason: string | null;
  enabled: boolean;
}

/** What a rule's condition sees of a call. */
export interface CallFacts {
  tool: { name: string };
  /** The call's arguments ({} when absent). */
  args: Record<string, unknown>;
  server: { id: string };
  session: { id: string };
  key: { id: string; name: string };
  client: { name: string; version: string; userAgent: string };
}

export interface PolicyBounds {
  maxChars: number;
  maxNodes: number;
}

/** Nested comprehensions (all/exists/map/filter inside another) multiply work by the list sizes: at most this deep. */
export const MAX_COMPREHENSION_DEPTH = 2;

export class RuleCompileError extends Error {}

type Evaluate = (facts: CallFacts) => unknown;

export interface CompiledRule extends PolicyRule {
  evaluate: Evaluate;
}

/** The decision for one call: the action, the rule that gave it (null: no rule matched, allowed) and the reason. */
export interface Decision {
  action: PolicyAction;
  rule: { id: string; name: string } | null;
  reason: string | null;
  /** Rules whose condition failed to evaluate (treated as not matching), in order. */
  errors: { ruleId: string; message: string }[];
}

const env = celEnv({ funcs: strings, variables: undefined });

/** Counts the expression's nodes and its deepest nesting of comprehensions, walking the parsed tree once. */
function measure(expr: unknown): { nodes: number; comprehensionDepth: number } {
  let nodes = 0;
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value: expr, depth: 0 }];
  while (stack.length) {
    const { value, depth } = stack.pop()!;
    if (!value || typeof value !== 'object') continue;
    const obj = value as Record<string, unknown>;
    let d = depth;
    if (obj.$typeName === 'cel.expr.Expr') {
      nodes++;
      const kind = obj.exprKind as { case?: string } | undefined;
      if (kind?.case === 'comprehensionExpr') deepest = Math.max(deepest, (d = depth + 1));
    }
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'sourceInfo') continue;
      if (Array.isArray(v)) for (const item of v) stack.push({ value: item, depth: d });
      else if (v && typeof v === 'object') stack.push({ value: v, depth: d });
    }
  }
  return { nodes, comprehensionDepth: deepest };
}

/** Compiles a condition or throws RuleCompileError naming what is wrong (syntax, size). */
export function compileCondition(condition: string, bounds: PolicyBounds): Evaluate {
  if (condition.length > bounds.maxChars) throw new RuleCompileError(`condition is longer than ${bounds.maxChars} characters (PROXY_RULE_MAX_CHARS)`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(condition);
  } catch (err) {
    throw new RuleCompileError(`condition is not valid CEL: ${(err as Error).message.slice(0, 300)}`);
  }
  const { nodes, comprehensionDepth } = measure(parsed.expr);
  if (nodes > bounds.maxNodes) throw new RuleCompileError(`condition has ${nodes} nodes, more than ${bounds.maxNodes} (PROXY_RULE_MAX_NODES)`);
  if (comprehensionDepth > MAX_COMPREHENSION_DEPTH) throw new RuleCompileError(`condition nests comprehensions ${comprehensionDepth} deep; at most ${MAX_COMPREHENSION_DEPTH}`);
  let run: (ctx: unknown) => unknown;
  try {
    run = plan(env, parsed) as (ctx: unknown) => unknown;
  } catch (err) {
    throw new RuleCompileError(`condition cannot be planned: ${(err as Error).message.slice(0, 300)}`);
  }
  return (facts) => run(facts);
}

export function compileRule(rule: PolicyRule, bounds: PolicyBounds): CompiledRule {
  return { ...rule, evaluate: compileCondition(rule.condition, bounds) };
}

/** One rule's verdict: matched, not matched, or an error (a non-bool result, a missing field, a thrown error). */
export function evaluateRule(rule: CompiledRule, facts: CallFacts): { matched: boolean; error: string | null } {
  let out: unknown;
  try {
    out = rule.evaluate(facts);
  } catch (err) {
    return { matched: false, error: `evaluation failed: ${String((err as Error)?.message ?? err).slice(0, 300)}` };
  }
  if (isCelError(out)) return { matched: false, error: String(out.message).slice(0, 300) };
  if (typeof out !== 'boolean') return { matched: false, error: 'condition did not give a bool' };
  return { matched: out, error: null };
}

/**
 * The first enabled rule whose condition is true decides; none: allow. A rule that errors is treated as not matching
 * and is named in `errors` (so the record shows it). Never throws.
 */
export function decide(rules: readonly CompiledRule[], facts: CallFacts): Decision {
  const errors: Decision['errors'] = [];
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const { matched, error } = evaluateRule(rule, facts);
    if (error) errors.push({ ruleId: rule.ruleId, message: error });
    if (matched) return { action: rule.action, rule: { id: rule.ruleId, name: rule.name }, reason: rule.reason ?? rule.name, errors };
  }
  return { action: 'allow', rule: null, reason: null, errors };
}
