-- Run control (issue 13): a failed or cancelled run can be retried under its
-- contract workflow ID. The run row always describes the current attempt;
-- `run_attempts` keeps every attempt once a run has been retried (a run
-- never retried has no rows: its one attempt is the run row itself).
ALTER TABLE activity_runs ADD COLUMN attempt integer NOT NULL DEFAULT 1;

CREATE TABLE run_attempts (
    run_id        uuid        NOT NULL,
    attempt       integer     NOT NULL,
    -- When it was asked for: for attempt 1, when the run started.
    requested_at  timestamptz NOT NULL,
    -- The API key that asked for a retry; NULL for attempt 1 (its trigger
    -- started it) and when authentication is disabled.
    requested_by  uuid,
    -- When Temporal accepted the start of the attempt's execution.
    dispatched_at timestamptz,
    status        text        NOT NULL,
    error         text,
    finished_at   timestamptz,
    CONSTRAINT run_attempts_pkey PRIMARY KEY (run_id, attempt),
    CONSTRAINT run_attempts_run_fkey FOREIGN KEY (run_id)
        REFERENCES activity_runs (run_id) ON DELETE CASCADE,
    CONSTRAINT run_attempts_attempt_check CHECK (attempt >= 1),
    CONSTRAINT run_attempts_status_check
        CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled'))
);

-- A task ran again by a retry keeps what its earlier attempts did:
-- `run_attempt` is the run attempt that last started it, and
-- `previous_attempts` a list of {run_attempt, status, attempts, started_at,
-- finished_at, error}, oldest first.
ALTER TABLE task_instances
    ADD COLUMN run_attempt       integer NOT NULL DEFAULT 1,
    ADD COLUMN previous_attempts jsonb   NOT NULL DEFAULT '[]';
