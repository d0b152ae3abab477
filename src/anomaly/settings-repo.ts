// SQL for per-organization rate-spike settings (organizations.anomaly_settings overrides) and the service defaults from config.
import type { Config } from '../config.js';
import type { Queryable } from '../db/db.js';
import { NotFound } from '../shared/domain-errors.js';
import { parseOverrides, SETTING_NAMES, type AnomalySettings, type SettingsPatch } from './anomaly-schemas.js';

/** The service-wide defaults: ANOMALY_* settings of the environment. */
export function defaultSettings(config: Config): AnomalySettings {
  return {
    windowSeconds: config.ANOMALY_WINDOW_SECONDS,
    minRate: config.ANOMALY_MIN_RATE,
    multiplier: config.ANOMALY_MULTIPLIER,
    cooldownSeconds: config.ANOMALY_COOLDOWN_SECONDS,
    suspendSessionsOnSpike: false,
  };
}

/** The org's effective settings: its overrides over the defaults. */
export async function readSettings(db: Queryable, orgId: string, defaults: AnomalySettings): Promise<AnomalySettings> {
  const r = await db.query<{ anomaly_settings: unknown }>('SELECT anomaly_settings FROM organizations WHERE id = $1', [orgId]);
  if (r.rows.length === 0) throw new NotFound('organization not found');
  return { ...defaults, ...parseOverrides(r.rows[0].anomaly_settings) };
}

/** Merges a patch into the org's overrides (null removes one) in one statement, and returns the effective settings. */
export async function updateSettings(db: Queryable, orgId: string, patch: SettingsPatch, defaults: AnomalySettings): Promise<AnomalySettings> {
  const set: Record<string, unknown> = {};
  const removed: string[] = [];
  for (const name of SETTING_NAMES) {
    const v = patch[name];
    if (v === null) removed.push(name);
    else if (v !== undefined) set[name] = v;
  }
  const r = await db.query<{ anomaly_settings: unknown }>(
    `UPDATE organizations SET anomaly_settings = (anomaly_settings - $3::text[]) || $2::jsonb WHERE id = $1 RETURNING anomaly_settings`,
    [orgId, JSON.stringify(set), removed],
  );
  if (r.rows.length === 0) throw new NotFound('organization not found');
  return { ...defaults, ...parseOverrides(r.rows[0].anomaly_settings) };
}
