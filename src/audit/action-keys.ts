// The action buckets tool calls are counted in: the four known actions, and `unknown` for anything else (null included).

export const ACTION_KEYS = ['allow', 'deny', 'redact', 'flag', 'unknown'] as const;
export type ActionKey = (typeof ACTION_KEYS)[number];

export function actionKey(action: string | null | undefined): ActionKey {
  return action === 'allow' || action === 'deny' || action === 'redact' || action === 'flag' ? action : 'unknown';
}
