-- Flow control (issue 14): at most `flow.concurrency.limit` runs of an
-- activity run at once per key. The slots live here, so the limit holds
-- across API replicas, workers and their restarts.

-- A run waiting for a slot is `queued`. The status list is extended from
-- whatever it is now (other migrations of this release may add statuses
-- too), not replaced by a list written here.
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
     WHERE conname = 'activity_runs_status_check' AND conrelid = 'activity_runs'::regclass;
    IF def IS NOT NULL AND position('''queued''' IN def) = 0 THEN
        ALTER TABLE activity_runs DROP CONSTRAINT activity_runs_status_check;
        -- def reads CHECK ((status = ANY (ARRAY['running'::text, ...]))).
        EXECUTE 'ALTER TABLE activity_runs ADD CONSTRAINT activity_runs_status_check '
            || replace(def, 'ARRAY[', 'ARRAY[''queued''::text, ');
    END IF;
END $$;

-- A run not run because of flow control is `skipped` with one of these.
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
     WHERE conname = 'activity_runs_skip_reason_check' AND conrelid = 'activity_runs'::regclass;
    IF def IS NOT NULL AND position('''concurrency_limit''' IN def) = 0 THEN
        ALTER TABLE activity_runs DROP CONSTRAINT activity_runs_skip_reason_check;
        EXECUTE 'ALTER TABLE activity_runs ADD CONSTRAINT activity_runs_skip_reason_check '
            || replace(def, 'ARRAY[', 'ARRAY[''concurrency_limit''::text, ''rate_limited''::text, ''debounced''::text, ');
    END IF;
END $$;

-- When the run joined its key's queue (set under the key's lock, so the
-- order of queued_at is the order of the queue), and its key.
ALTER TABLE activity_runs
    ADD COLUMN queued_at timestamptz,
    ADD COLUMN flow_key  text;

-- One row per run of a flow-controlled activity that has not ended: waiting
-- (acquired_at NULL, in `seq` order per key) or holding a slot.
CREATE TABLE flow_slots (
    run_id       uuid        NOT NULL,
    activity_id  uuid        NOT NULL,
    flow_key     text        NOT NULL,
    seq          bigint      GENERATED ALWAYS AS IDENTITY,
    queued_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    acquired_at  timestamptz,
    CONSTRAINT flow_slots_pkey PRIMARY KEY (run_id),
    CONSTRAINT flow_slots_run_fkey FOREIGN KEY (run_id)
        REFERENCES activity_runs (run_id) ON DELETE CASCADE
);
CREATE INDEX flow_slots_key_idx ON flow_slots (activity_id, flow_key, seq);

-- A run that ends frees its slot (or leaves its queue) in the same
-- transaction, whichever path ends it: the workflow, a cancel or terminate
-- through the API, a recorded skip, a recovery pass.
CREATE FUNCTION flow_release_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM flow_slots WHERE run_id = NEW.run_id;
    RETURN NEW;
END $$;

CREATE TRIGGER activity_runs_flow_release
    AFTER UPDATE OF status ON activity_runs
    FOR EACH ROW
    WHEN (NEW.status NOT IN ('running', 'queued') AND OLD.status IN ('running', 'queued'))
    EXECUTE FUNCTION flow_release_slot();
