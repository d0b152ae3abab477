// SQL for the organization's anomaly acknowledgement: anomalies up to a seq acknowledged, by whom and when (migration 035).
import type { Queryable } from '../db/db.js';

export interface AnomalyAcknowledgement {
  /** Every anomaly with a seq up to this one is acknowledged; 0 when none ever was. */
  upToSeq: number;
  acknowledgedBy: string | null;
  acknowledgedAt: string | null;
}

const NONE: AnomalyAcknowledgement = { upToSeq: 0, acknowledgedBy: null, acknowledgedAt: null };

interface AckRow {
  up_to_seq: string | number;
  acknowledged_by: string;
  acknowledged_at: Date | string;
}

const toAck = (r: AckRow | undefined): AnomalyAcknowledgement =>
  r ? { upToSeq: Number(r.up_to_seq), acknowledgedBy: r.acknowledged_by, acknowledgedAt: new Date(r.acknowledged_at).toISOString() } : NONE;

export async function readAcknowledgement(db: Queryable, orgId: string): Promise<AnomalyAcknowledgement> {
  const r = await db.query<AckRow>('SELECT up_to_seq, acknowledged_by, acknowledged_at FROM anomaly_acknowledgements WHERE org_id = $1', [orgId]);
  return toAck(r.rows[0]);
}

/**
 * Acknowledges the anomalies up to `upToSeq`, capped at the organization's last seq (nothing not yet stored can be
 * acknowledged). An acknowledgement only rises: a lower or equal one changes nothing and answers the stored one.
 */
export async function acknowledgeUpTo(db: Queryable, orgId: string, upToSeq: number, by: string): Promise<AnomalyAcknowledgement> {
  const r = await db.query<AckRow>(
    `WITH capped AS (SELECT least($2::bigint, event_seq) AS seq FROM organizations WHERE id = $1)
     INSERT INTO anomaly_acknowledgements AS a (org_id, up_to_seq, acknowledged_by)
     SELECT $1, seq, $3 FROM capped
     ON CONFLICT (org_id) DO UPDATE SET up_to_seq = excluded.up_to_seq, acknowledged_by = excluded.acknowledged_by, acknowledged_at = now()
       WHERE excluded.up_to_seq > a.up_to_seq
     RETURNING up_to_seq, acknowledged_by, acknowledged_at`,
    [orgId, upToSeq, by],
  );
  return r.rows.length ? toAck(r.rows[0]) : readAcknowledgement(db, orgId);
}
