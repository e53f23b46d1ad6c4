-- `calendar_coverage` alerts: the business calendar an activity's trigger
-- names is known right only until its `covered_until`.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';
ALTER TABLE alerts DROP CONSTRAINT alerts_kind_check;
ALTER TABLE alerts ADD CONSTRAINT alerts_kind_check
    CHECK (kind IN ('late_start', 'stuck', 'failure_streak', 'missed_fire', 'calendar_coverage'));
