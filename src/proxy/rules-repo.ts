// SQL for an organization's ordered policy rules.
import type { Queryable } from '../db/db.js';
import type { PolicyAction, PolicyRule } from './policy-engine.js';

export interface RuleRow extends PolicyRule {
  position: number;
  createdAt: string;
  updatedAt: string;
}

interface DbRow {
  rule_id: string;
  position: number;
  name: string;
  condition: string;
  action: PolicyAction;
  reason: string | null;
  enabled: boolean;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'rule_id, position, name, condition, action, reason, enabled, created_at, updated_at';

function toRow(r: DbRow): RuleRow {
  return {
    ruleId: r.rule_id,
    position: Number(r.position),
    name: r.name,
    condition: r.condition,
    action: r.action,
    reason: r.reason,
    enabled: r.enabled,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

export interface RuleInput {
  name: string;
  condition: string;
  action: PolicyAction;
  reason: string | null;
  enabled: boolean;
}

/** The organization's rules in evaluation order. */
export async function listRules(db: Queryable, orgId: string): Promise<RuleRow[]> {
  const r = await db.query<DbRow>(`SELECT ${COLUMNS} FROM proxy_rules WHERE org_id = $1 ORDER BY position, created_at`, [orgId]);
  return r.rows.map(toRow);
}


/** Inserts a rule at `position` (0-based; past the end: last), moving the rules from there one down. */
export async function insertRule(tx: Queryable, orgId: string, input: RuleInput, position: number): Promise<RuleRow> {
  await tx.query('UPDATE proxy_rules SET position = position + 1 WHERE org_id = $1 AND position >= $2', [orgId, position]);
  const r = await tx.query<DbRow>(
    `INSERT INTO proxy_rules (org_id, position, name, condition, action, reason, enabled)
     VALUES ($1, LEAST($2, (SELECT count(*) FROM proxy_rules WHERE org_id = $1)), $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [orgId, position, input.name, input.condition, input.action, input.reason, input.enabled],
  );
  return toRow(r.rows[0]);
}

export async function updateRule(tx: Queryable, orgId: string, ruleId: string, input: RuleInput): Promise<RuleRow | undefined> {
  const r = await tx.query<DbRow>(
    `UPDATE proxy_rules SET name = $3, condition = $4, action = $5, reason = $6, enabled = $7, updated_at = now()
     WHERE org_id = $1 AND rule_id = $2 RETURNING ${COLUMNS}`,
    [orgId, ruleId, input.name, input.condition, input.action, input.reason, input.enabled],
  );
  return r.rows[0] ? toRow(r.rows[0]) : undefined;
}

/** Deletes a rule and closes the gap in the order. */
export async function deleteRule(tx: Queryable, orgId: string, ruleId: string): Promise<boolean> {
  const r = await tx.query<{ position: number }>('DELETE FROM proxy_rules WHERE org_id = $1 AND rule_id = $2 RETURNING position', [orgId, ruleId]);
  if (!r.rows[0]) return false;
  await tx.query('UPDATE proxy_rules SET position = position - 1 WHERE org_id = $1 AND position > $2', [orgId, r.rows[0].position]);
  return true;
}

/** Sets the order: `ruleIds` must name every rule of the organization once. */
export async function reorderRules(tx: Queryable, orgId: string, ruleIds: string[]): Promise<void> {
  await tx.query(
    `UPDATE proxy_rules r SET position = o.ord - 1, updated_at = now()
     FROM unnest($2::uuid[]) WITH ORDINALITY AS o(rule_id, ord) WHERE r.org_id = $1 AND r.rule_id = o.rule_id`,
    [orgId, ruleIds],
  );
}
