-- Flow control (issue 14): `flow.rate_limit`, at most `limit` run starts of
-- an activity per `period` per key. Starts and the runs waiting for one live
-- here, so the limit holds across API replicas, workers and their restarts.

-- Every start granted under a rate limit, per (activity, key). A start is
-- counted in any window of `period` that holds it; rows older than the
-- longer of the period and an hour are pruned under the key's lock. One per
-- run attempt: a retried grant finds its own row.
CREATE TABLE flow_starts (
    run_id       uuid        NOT NULL,
    attempt      integer     NOT NULL,
    activity_id  uuid        NOT NULL,
    flow_key     text        NOT NULL,
    started_at   timestamptz NOT NULL,
    CONSTRAINT flow_starts_pkey PRIMARY KEY (run_id, attempt)
);
CREATE INDEX flow_starts_key_idx ON flow_starts (activity_id, flow_key, started_at);

-- Runs waiting for a start, in `seq` order per key (first in first out).
CREATE TABLE flow_rate_waits (
    run_id       uuid        NOT NULL,
    activity_id  uuid        NOT NULL,
    flow_key     text        NOT NULL,
    seq          bigint      GENERATED ALWAYS AS IDENTITY,
    queued_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT flow_rate_waits_pkey PRIMARY KEY (run_id),
    CONSTRAINT flow_rate_waits_run_fkey FOREIGN KEY (run_id)
        REFERENCES activity_runs (run_id) ON DELETE CASCADE
);
CREATE INDEX flow_rate_waits_key_idx ON flow_rate_waits (activity_id, flow_key, seq);

-- A run that ends while waiting for a start (cancelled, skipped) leaves the
-- rate queue in the same transaction, as it leaves the concurrency queue.
CREATE OR REPLACE FUNCTION flow_release_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM flow_slots WHERE run_id = NEW.run_id;
    DELETE FROM flow_rate_waits WHERE run_id = NEW.run_id;
    RETURN NEW;
END $$;
