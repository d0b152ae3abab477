-- Anomalies acknowledged by the organization ("Clear" on the dashboard): every anomaly with a seq up to up_to_seq is
-- acknowledged, for every member, and stays so across reloads and instances. One row per organization; it only rises.
CREATE TABLE anomaly_acknowledgements (
  org_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  up_to_seq bigint NOT NULL CHECK (up_to_seq >= 0),
  acknowledged_by text NOT NULL,
  acknowledged_at timestamptz NOT NULL DEFAULT now()
);
