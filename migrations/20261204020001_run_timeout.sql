-- Run control (issue 13): an activity's `run_timeout` (in its definition)
-- bounds a run; a run exceeding it is cancelled and recorded `timed_out`.
-- `cancel_timed_out` marks the cancellation as the deadline's, so whichever
-- path ends the run (the workflow's cleanup, a forced or late ending) writes
-- `timed_out` rather than `cancelled`.
ALTER TABLE activity_runs ADD COLUMN cancel_timed_out boolean NOT NULL DEFAULT false;

ALTER TABLE activity_runs DROP CONSTRAINT activity_runs_status_check;
ALTER TABLE activity_runs ADD CONSTRAINT activity_runs_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'skipped'));

ALTER TABLE run_attempts DROP CONSTRAINT run_attempts_status_check;
ALTER TABLE run_attempts ADD CONSTRAINT run_attempts_status_check
    CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'timed_out'));
