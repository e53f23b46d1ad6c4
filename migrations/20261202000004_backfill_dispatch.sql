-- A requested time is dispatched once Temporal accepted its backfill. Until
-- then (Temporal was down when it was asked for) the reconciler retries it.
ALTER TABLE backfill_requests ADD COLUMN dispatched_at timestamptz;
UPDATE backfill_requests SET dispatched_at = requested_at;
CREATE INDEX backfill_requests_undispatched ON backfill_requests (requested_at) WHERE dispatched_at IS NULL;
