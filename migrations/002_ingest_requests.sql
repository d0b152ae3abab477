-- Outcomes of ingest requests sent with an Idempotency-Key: a retry with the same key answers the same counts.

CREATE TABLE ingest_requests (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  -- sha256 of the route and the request body: the same key with a different request is refused (422)
  fingerprint text NOT NULL,
  accepted integer NOT NULL,
  duplicates integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, idempotency_key)
);
