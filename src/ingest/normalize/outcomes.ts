// Reads the action of one parsed record: decision words, status/outcome words, a `success` flag, a gateway refusal code.
import { mapAction, type Action } from './actions.js';
import { isObject } from '../../shared/input-safety.js';
import { cleanString, ownValue } from './strings.js';

/** Keys holding the proxy's decision; any word found is kept (as rawAction when it does not map). */
export const DECISION_KEYS = ['action', 'decision', 'verdict', 'outcome', 'policy_decision', 'policyDecision'] as const;
/** Keys holding a call's status; they count only when the word maps (`status: 200` or `status: "active"` are no action). */
export const STATUS_KEYS = ['status', 'result'] as const;
/**
 * JSON-RPC error codes Tyk's MCP gateway writes as `mcp_error_code` when it refuses a call itself (authentication
 * required, access denied, rate limit exceeded, invalid request): the call was not let through.
 */
const REFUSAL_CODES: ReadonlySet<number> = new Set([-32001, -32002, -32003, -32600]);

export interface FoundAction {
  action: Action;
  /** The word (or `key=value` for flags and codes) the action was read from. */
  word: string;
}

function scalar(value: unknown): value is string | number | boolean | bigint {
  return value !== undefined && value !== null && !isObject(value) && !Array.isArray(value);
}

/**
 * The action one record states, by precedence: decision keys, then status keys, then a boolean `success` (true or
 * false: the call was let through), then a refusal code. `unmapped` is the first decision word outside the vocabulary.
 */
export function actionIn(obj: Record<string, unknown>): { found: FoundAction | null; unmapped: string | null } {
  let unmapped: string | null = null;
  for (const key of DECISION_KEYS) {
    const value = ownValue(obj, key);
    if (!scalar(value)) continue;
    const mapped = mapAction(value);
    if (mapped.action !== null) return { found: { action: mapped.action, word: cleanString(String(value)) ?? String(value) }, unmapped: null };
    unmapped ??= mapped.rawAction;
  }
  for (const key of STATUS_KEYS) {
    const value = ownValue(obj, key);
    if (typeof value !== 'string') continue;
    const mapped = mapAction(value);
    if (mapped.action !== null) return { found: { action: mapped.action, word: cleanString(value) ?? value }, unmapped };
  }
  const success = ownValue(obj, 'success');
  if (typeof success === 'boolean') return { found: { action: 'allow', word: `success=${success}` }, unmapped };
  const code = Number(ownValue(obj, 'mcp_error_code'));
  if (REFUSAL_CODES.has(code)) return { found: { action: 'deny', word: `mcp_error_code=${code}` }, unmapped };
  return { found: null, unmapped };
}
