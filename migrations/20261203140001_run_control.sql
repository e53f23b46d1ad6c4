-- Run control (issue 13): a running run can be cancelled through the API.
-- The request is recorded on the run row before Temporal is asked, so a
-- second request finds it (idempotent) and the run's ending keeps who asked
-- and why. `cancelled_by` is the API key's ID, NULL when auth is disabled.
ALTER TABLE activity_runs
    ADD COLUMN cancel_requested_at timestamptz,
    ADD COLUMN cancel_reason       text,
    ADD COLUMN cancelled_by        uuid,
    ADD COLUMN cancel_forced       boolean NOT NULL DEFAULT false;

-- Tasks a cancelled run never started, and the one it interrupted, end
-- `cancelled`.
ALTER TABLE task_instances DROP CONSTRAINT task_instances_status_check;
ALTER TABLE task_instances ADD CONSTRAINT task_instances_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled'));
