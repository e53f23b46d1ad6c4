-- Fair share: the runs a project keeps running at once under contention
-- (its guaranteed share; `quota_runs_running` is what it may burst to when
-- others are idle). NULL guarantees nothing beyond its weight's share.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

ALTER TABLE projects ADD COLUMN runs_guaranteed integer
    CONSTRAINT projects_runs_guaranteed_check CHECK (runs_guaranteed >= 0);
