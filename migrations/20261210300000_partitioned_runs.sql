-- The run history (activity_runs, task_instances) in day partitions, so
-- that retention drops whole partitions instead of deleting rows from the
-- tables every run writes (docs/ARCHITECTURE.md, "History").
--
-- activity_runs is partitioned by `created_at`: set once, by the insert
-- that first writes the run (its default, now()), and never updated, so a
-- row never moves between partitions and a partition's runs are those
-- created in its day. `scheduled_for` is not known for event and manual
-- runs; `started_at` changes when a queued run starts or a run is retried.
--
-- A unique constraint on a partitioned table must hold the partition key,
-- so "one run per run_id" lives in `run_keys`, an unpartitioned table of
-- (run_id, activity_id, workflow_id, created_at) that retention does not
-- prune. A BEFORE INSERT trigger on activity_runs writes the key first and
-- skips the run row when its key exists (the insert then affects no row,
-- as `ON CONFLICT (run_id) DO NOTHING` did), whoever inserts: the service,
-- an operator's SQL, an import. So a run whose partition was dropped is
-- never written again under its ID. The key's `created_at` is the run's
-- partition key: a lookup by run ID reads it (one primary-key probe) and
-- names the run's partition.
--
-- task_instances is partitioned by its run's `created_at` (the column
-- `run_created_at`, which the writer reads from run_keys), so a run's tasks
-- share its day and go with it, and its unique keys can include it: a
-- task's ID, index and workflow ID always come with the same run.
--
-- The foreign keys that named activity_runs (run_id) now name run_keys.
--
-- Rows written with a `created_at` before the first day partition (an
-- import of old history) land in the `_before` partitions (MINVALUE to the
-- first day), which no retention pass touches; there is no default
-- partition (it would forbid DETACH ... CONCURRENTLY). Nothing lands after
-- the partitions the duty makes ahead: the insert fails loudly.

-- Fail fast rather than queue every run writer behind a long transaction;
-- run it again when quieter. The copy below holds the tables' locks for
-- its whole length: see the upgrade notes in docs/OPERATIONS.md for a
-- large history.
SET LOCAL lock_timeout = '10s';

CREATE TABLE run_keys (
    run_id       uuid        NOT NULL,
    activity_id  uuid        NOT NULL,
    workflow_id  text        NOT NULL,
    created_at   timestamptz NOT NULL,
    CONSTRAINT run_keys_pkey PRIMARY KEY (run_id),
    CONSTRAINT run_keys_workflow_id_key UNIQUE (workflow_id)
);

INSERT INTO run_keys (run_id, activity_id, workflow_id, created_at)
SELECT run_id, activity_id, workflow_id, created_at FROM activity_runs;

ALTER TABLE run_attempts DROP CONSTRAINT run_attempts_run_fkey;
ALTER TABLE flow_slots DROP CONSTRAINT flow_slots_run_fkey;
ALTER TABLE flow_rate_waits DROP CONSTRAINT flow_rate_waits_run_fkey;
ALTER TABLE task_instances DROP CONSTRAINT task_instances_run_fkey;
ALTER TABLE run_attempts ADD CONSTRAINT run_attempts_run_fkey FOREIGN KEY (run_id)
    REFERENCES run_keys (run_id) ON DELETE CASCADE;
ALTER TABLE flow_slots ADD CONSTRAINT flow_slots_run_fkey FOREIGN KEY (run_id)
    REFERENCES run_keys (run_id) ON DELETE CASCADE;
ALTER TABLE flow_rate_waits ADD CONSTRAINT flow_rate_waits_run_fkey FOREIGN KEY (run_id)
    REFERENCES run_keys (run_id) ON DELETE CASCADE;

-- The old tables keep their rows (and their triggers, dropped with them)
-- until copied; their indexes and keys go now, freeing the names.
ALTER TABLE activity_runs RENAME TO activity_runs_unpartitioned;
ALTER TABLE activity_runs_unpartitioned
    DROP CONSTRAINT activity_runs_pkey,
    DROP CONSTRAINT activity_runs_workflow_id_key,
    DROP CONSTRAINT activity_runs_activity_fkey;
DROP INDEX activity_runs_activity_idx, activity_runs_list_idx,
    activity_runs_recent_scheduled_idx, activity_runs_scheduled_idx,
    activity_runs_status_idx;
ALTER TABLE task_instances RENAME TO task_instances_unpartitioned;
ALTER TABLE task_instances_unpartitioned
    DROP CONSTRAINT task_instances_pkey,
    DROP CONSTRAINT task_instances_run_index_key,
    DROP CONSTRAINT task_instances_workflow_id_key;

CREATE TABLE activity_runs (
    LIKE activity_runs_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    CONSTRAINT activity_runs_pkey PRIMARY KEY (run_id, created_at),
    CONSTRAINT activity_runs_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id)
) PARTITION BY RANGE (created_at);
CREATE INDEX activity_runs_activity_idx ON activity_runs (activity_id, created_at DESC, run_id DESC);
CREATE INDEX activity_runs_list_idx ON activity_runs (created_at DESC, run_id DESC);
CREATE INDEX activity_runs_recent_scheduled_idx ON activity_runs (scheduled_for)
    WHERE trigger_type IN ('cron', 'interval');
CREATE INDEX activity_runs_scheduled_idx ON activity_runs (activity_id, scheduled_for);
CREATE INDEX activity_runs_status_idx ON activity_runs (status, created_at DESC, run_id DESC);
-- Dispatches find their run by workflow ID (unique in run_keys).
CREATE INDEX activity_runs_workflow_idx ON activity_runs (workflow_id);

CREATE TABLE task_instances (
    LIKE task_instances_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
    run_created_at timestamptz NOT NULL,
    CONSTRAINT task_instances_pkey PRIMARY KEY (id, run_created_at),
    CONSTRAINT task_instances_run_index_key UNIQUE (run_id, task_index, run_created_at),
    CONSTRAINT task_instances_workflow_id_key UNIQUE (workflow_id, run_created_at),
    CONSTRAINT task_instances_run_fkey FOREIGN KEY (run_id) REFERENCES run_keys (run_id)
) PARTITION BY RANGE (run_created_at);

-- One partition per UTC day, named <table>_pYYYYMMDD (the names the
-- retention duty makes and recognises), from the oldest run's day to
-- three days ahead, and the `_before` partition under them.
DO $$
DECLARE
    first_day date := least(
        (SELECT min(created_at AT TIME ZONE 'UTC')::date FROM run_keys),
        (now() AT TIME ZONE 'UTC')::date);
    last_day  date := (now() AT TIME ZONE 'UTC')::date + 3;
    day       date;
    parent    text;
BEGIN
    FOREACH parent IN ARRAY ARRAY['activity_runs', 'task_instances'] LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)',
            parent || '_before', parent, (first_day::timestamp AT TIME ZONE 'UTC'));
        day := first_day;
        WHILE day <= last_day LOOP
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                parent || '_p' || to_char(day, 'YYYYMMDD'), parent,
                (day::timestamp AT TIME ZONE 'UTC'),
                ((day + 1)::timestamp AT TIME ZONE 'UTC'));
            day := day + 1;
        END LOOP;
    END LOOP;
END $$;

-- Copied before the triggers exist: the rollups, the change log and the
-- notifications already hold these rows.
INSERT INTO activity_runs SELECT * FROM activity_runs_unpartitioned;
INSERT INTO task_instances
SELECT t.*, k.created_at FROM task_instances_unpartitioned t JOIN run_keys k ON k.run_id = t.run_id;
DROP TABLE task_instances_unpartitioned;
DROP TABLE activity_runs_unpartitioned;

CREATE FUNCTION acp_run_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO run_keys (run_id, activity_id, workflow_id, created_at)
    VALUES (NEW.run_id, NEW.activity_id, NEW.workflow_id, NEW.created_at)
    ON CONFLICT (run_id) DO NOTHING;
    IF FOUND THEN
        RETURN NEW;
    END IF;
    -- The run exists, or existed and was pruned: it is not written again.
    RETURN NULL;
END $$;

CREATE TRIGGER activity_runs_key BEFORE INSERT ON activity_runs
    FOR EACH ROW EXECUTE FUNCTION acp_run_key();

-- The partition key never changes: an UPDATE moving a run to another
-- partition would re-insert it there, and the key trigger would skip it.
CREATE FUNCTION acp_run_created_at_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a run''s created_at is its partition key and does not change'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'activity_runs_created_at_fixed';
END $$;

CREATE TRIGGER activity_runs_created_at_fixed BEFORE UPDATE OF created_at ON activity_runs
    FOR EACH ROW WHEN (NEW.created_at IS DISTINCT FROM OLD.created_at)
    EXECUTE FUNCTION acp_run_created_at_fixed();
CREATE TRIGGER activity_runs_change AFTER INSERT OR UPDATE ON activity_runs
    FOR EACH ROW EXECUTE FUNCTION acp_run_changed();
CREATE TRIGGER activity_runs_ended_notification AFTER INSERT OR UPDATE OF status ON activity_runs
    FOR EACH ROW EXECUTE FUNCTION acp_run_ended_notification();
CREATE TRIGGER activity_runs_flow_release AFTER UPDATE OF status ON activity_runs
    FOR EACH ROW
    WHEN (NEW.status NOT IN ('running', 'queued') AND OLD.status IN ('running', 'queued'))
    EXECUTE FUNCTION flow_release_slot();
-- Dropping or detaching a partition fires none of these: the rollups keep
-- counting the runs retention drops.
CREATE TRIGGER activity_runs_rollups_insert AFTER INSERT ON activity_runs
    REFERENCING NEW TABLE AS new_runs FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();
CREATE TRIGGER activity_runs_rollups_update AFTER UPDATE ON activity_runs
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();
CREATE TRIGGER activity_runs_rollups_delete AFTER DELETE ON activity_runs
    REFERENCING OLD TABLE AS old_runs FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();
CREATE TRIGGER activity_runs_rollups_truncate AFTER TRUNCATE ON activity_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups_truncate();

-- A task's activity, from the key table: one probe, whatever the partitions.
CREATE OR REPLACE FUNCTION acp_task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    activity uuid;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status
       AND NEW.started_at IS NOT DISTINCT FROM OLD.started_at THEN
        RETURN NULL;
    END IF;
    SELECT activity_id INTO activity FROM run_keys WHERE run_id = NEW.run_id;
    PERFORM acp_log_change(
        CASE WHEN NEW.status = 'running' THEN 'run.task_started' ELSE 'run.task_ended' END,
        activity, NEW.run_id::text,
        jsonb_build_object('run_id', NEW.run_id, 'task_index', NEW.task_index,
            'task_type', NEW.task_type, 'name', NEW.name, 'status', NEW.status,
            'attempts', NEW.attempts, 'started_at', NEW.started_at,
            'finished_at', NEW.finished_at, 'error', NEW.error));
    RETURN NULL;
END $$;

CREATE TRIGGER task_instances_change AFTER INSERT OR UPDATE ON task_instances
    FOR EACH ROW EXECUTE FUNCTION acp_task_changed();
