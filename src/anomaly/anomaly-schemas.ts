// Zod schemas of the rate-spike settings: the effective settings, a PUT body (partial; null = back to the default), stored overrides.
import { z } from 'zod';

export const settingFields = {
  /** Length of the sliding window the current rate is measured over. */
  windowSeconds: z.number().int().min(1).max(3600),
  /** Rate (calls per minute) below which nothing is a spike, whatever the baseline. */
  minRate: z.number().positive().max(1e9),
  /** How many times the baseline rate a window's rate must exceed. */
  multiplier: z.number().min(1).max(1000),
  /** Quiet time per (server, tool) after an alert. */
  cooldownSeconds: z.number().int().min(1).max(86_400),
  /** Whether the sessions that drove a spike are suspended. */
  suspendSessionsOnSpike: z.boolean(),
};

export const anomalySettingsSchema = z.object(settingFields);
export type AnomalySettings = z.output<typeof anomalySettingsSchema>;
export type SettingName = keyof AnomalySettings;
export const SETTING_NAMES = Object.keys(settingFields) as SettingName[];

/** PUT body: the settings to change; a null resets one to the service default; omitted ones stay as they are. */
export const settingsPatchSchema = z
  .object({
    windowSeconds: settingFields.windowSeconds.nullable().optional(),
    minRate: settingFields.minRate.nullable().optional(),
    multiplier: settingFields.multiplier.nullable().optional(),
    cooldownSeconds: settingFields.cooldownSeconds.nullable().optional(),
    suspendSessionsOnSpike: settingFields.suspendSessionsOnSpike.nullable().optional(),
  })
  .strict();

export type SettingsPatch = z.output<typeof settingsPatchSchema>;

/** The org's stored overrides (organizations.anomaly_settings), read leniently: a value that is not valid is ignored. */
export function parseOverrides(stored: unknown): Partial<AnomalySettings> {
  const out: Record<string, unknown> = {};
  if (!stored || typeof stored !== 'object') return out;
  for (const name of SETTING_NAMES) {
    const r = settingFields[name].safeParse((stored as Record<string, unknown>)[name]);
    if (r.success) out[name] = r.data;
  }
  return out as Partial<AnomalySettings>;
}
