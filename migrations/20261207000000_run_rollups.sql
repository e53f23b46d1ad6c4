-- Run rollups: runs counted per minute, hour and day (of `created_at`, in
-- UTC), activity, trigger type and status, with their durations
-- (`finished_at - started_at`, when both are set) in a log-bucketed
-- histogram, so that statistics and summaries read a row per bucket
-- instead of every run of their window.
--
-- Triggers on activity_runs keep them exact in the transaction that writes
-- the runs, whoever writes them (service, worker, an operator's SQL, a bulk
-- import), and a writer killed mid-transaction takes its rollup changes
-- with it. A run whose status, times or keys change moves: its old key is
-- decremented, its new one incremented.
--
-- The triggers are per statement, with transition tables: a statement's
-- changes are summed per key and applied in one upsert per table, in key
-- order. So a statement writing many runs (a bulk cancel, a group commit
-- of events) touches each rollup row once, and two such statements lock
-- the rows they share in the same order: they wait for each other, they do
-- not deadlock. (A per-row trigger would lock rows in the order the rows
-- come, which two statements need not share.) PostgreSQL refuses transition
-- tables on `UPDATE OF` column lists, so the UPDATE trigger runs for every
-- update; one whose keys, status and times are unchanged sums to nothing
-- and writes nothing.
--
-- Contention: writers of different activities never share a rollup row.
-- Writers of the same activity, trigger type and status share the row of
-- the current minute, hour and day and wait for each other's commit on
-- it; the ingest's group commit puts a burst's runs in one transaction, so
-- the wait is per batch, not per run. Rows are not split into shards: a
-- shard would multiply every read by the shard count for a wait that only
-- one activity's own writers see.
--
-- Rows whose count falls to zero stay (a run that finished leaves its
-- `running` row at 0): at most one per key ever used, and reads skip them.

-- Fail fast instead of queueing behind a long transaction on activity_runs
-- (and making every writer queue behind this migration).
SET LOCAL lock_timeout = '10s';

CREATE TABLE run_rollups (
    bucket_seconds  integer     NOT NULL,
    bucket          timestamptz NOT NULL,
    activity_id     uuid        NOT NULL,
    trigger_type    text        NOT NULL,
    status          text        NOT NULL,
    runs            bigint      NOT NULL,
    CONSTRAINT run_rollups_pkey
        PRIMARY KEY (bucket_seconds, bucket, activity_id, trigger_type, status),
    CONSTRAINT run_rollups_bucket_check CHECK (bucket_seconds IN (60, 3600, 86400))
) WITH (fillfactor = 80);
-- One activity's buckets, for its statistics and its summary.
CREATE INDEX run_rollups_activity_idx ON run_rollups (activity_id, bucket_seconds, bucket);

-- Bin `b` holds the durations d (in microseconds) with
-- b = ceil(ln(d) / ln(gamma)), gamma = 1.01 / 0.99; zero and negative
-- durations are bin -1. acp_domain::sketch reads them back within 1 %.
CREATE TABLE run_rollup_bins (
    bucket_seconds  integer     NOT NULL,
    bucket          timestamptz NOT NULL,
    activity_id     uuid        NOT NULL,
    trigger_type    text        NOT NULL,
    status          text        NOT NULL,
    bin             integer     NOT NULL,
    n               bigint      NOT NULL,
    CONSTRAINT run_rollup_bins_pkey
        PRIMARY KEY (bucket_seconds, bucket, activity_id, trigger_type, status, bin),
    CONSTRAINT run_rollup_bins_bucket_check CHECK (bucket_seconds IN (60, 3600, 86400))
) WITH (fillfactor = 80);
CREATE INDEX run_rollup_bins_activity_idx
    ON run_rollup_bins (activity_id, bucket_seconds, bucket);

CREATE FUNCTION acp_duration_bin(started timestamptz, finished timestamptz)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN started IS NULL OR finished IS NULL THEN NULL
        WHEN finished - started < interval '1 microsecond' THEN -1
        ELSE ceil(ln((extract(epoch FROM finished - started) * 1000000)::float8)
                  / ln(1.01::float8 / 0.99::float8))::integer
    END
$$;

-- One run's part in the rollups: +1 as it is, -1 as it was.
CREATE TYPE acp_run_delta AS (
    activity_id   uuid,
    trigger_type  text,
    status        text,
    created_at    timestamptz,
    bin           integer,
    n             integer
);

-- Applies a statement's deltas, summed per key, in key order.
CREATE FUNCTION acp_run_rollups_apply(deltas acp_run_delta[])
RETURNS void LANGUAGE sql AS $$
    INSERT INTO run_rollups AS r (bucket_seconds, bucket, activity_id, trigger_type, status, runs)
    SELECT g.s, date_bin(make_interval(secs => g.s), d.created_at, timestamptz '1970-01-01 00:00:00+00'),
           d.activity_id, d.trigger_type, d.status, sum(d.n)
      FROM unnest(deltas) AS d CROSS JOIN (VALUES (60), (3600), (86400)) AS g(s)
     GROUP BY 1, 2, 3, 4, 5
    HAVING sum(d.n) <> 0
     ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (bucket_seconds, bucket, activity_id, trigger_type, status)
        DO UPDATE SET runs = r.runs + EXCLUDED.runs;
    INSERT INTO run_rollup_bins AS r (bucket_seconds, bucket, activity_id, trigger_type, status, bin, n)
    SELECT g.s, date_bin(make_interval(secs => g.s), d.created_at, timestamptz '1970-01-01 00:00:00+00'),
           d.activity_id, d.trigger_type, d.status, d.bin, sum(d.n)
      FROM unnest(deltas) AS d CROSS JOIN (VALUES (60), (3600), (86400)) AS g(s)
     WHERE d.bin IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6
    HAVING sum(d.n) <> 0
     ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (bucket_seconds, bucket, activity_id, trigger_type, status, bin)
        DO UPDATE SET n = r.n + EXCLUDED.n;
$$;

-- Transition tables are visible to the trigger's own statements only, so
-- each operation gathers its deltas here and hands them over as an array.
CREATE FUNCTION acp_run_rollups() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas acp_run_delta[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(ROW(activity_id, trigger_type, status, created_at,
                             acp_duration_bin(started_at, finished_at), 1)::acp_run_delta)
          INTO deltas FROM new_runs;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(ROW(activity_id, trigger_type, status, created_at,
                             acp_duration_bin(started_at, finished_at), -1)::acp_run_delta)
          INTO deltas FROM old_runs;
    ELSE
        -- Only runs whose part changed; the others would cancel out.
        SELECT array_agg(d) INTO deltas FROM (
            SELECT ROW(o.activity_id, o.trigger_type, o.status, o.created_at,
                       acp_duration_bin(o.started_at, o.finished_at), -1)::acp_run_delta AS d
              FROM old_runs o LEFT JOIN new_runs n USING (run_id)
             WHERE (o.activity_id, o.trigger_type, o.status, o.created_at, o.started_at, o.finished_at)
                   IS DISTINCT FROM (n.activity_id, n.trigger_type, n.status, n.created_at, n.started_at, n.finished_at)
            UNION ALL
            SELECT ROW(n.activity_id, n.trigger_type, n.status, n.created_at,
                       acp_duration_bin(n.started_at, n.finished_at), 1)::acp_run_delta
              FROM new_runs n LEFT JOIN old_runs o USING (run_id)
             WHERE (o.activity_id, o.trigger_type, o.status, o.created_at, o.started_at, o.finished_at)
                   IS DISTINCT FROM (n.activity_id, n.trigger_type, n.status, n.created_at, n.started_at, n.finished_at)
        ) AS changed;
    END IF;
    IF deltas IS NOT NULL THEN
        PERFORM acp_run_rollups_apply(deltas);
    END IF;
    RETURN NULL;
END $$;

-- Creating the triggers locks activity_runs against writes until this
-- migration commits, so no run is written between the backfill's read and
-- the triggers' start: none is counted twice or missed.
CREATE TRIGGER activity_runs_rollups_insert AFTER INSERT ON activity_runs
    REFERENCING NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();
CREATE TRIGGER activity_runs_rollups_update AFTER UPDATE ON activity_runs
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();
CREATE TRIGGER activity_runs_rollups_delete AFTER DELETE ON activity_runs
    REFERENCING OLD TABLE AS old_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups();

CREATE FUNCTION acp_run_rollups_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE run_rollups, run_rollup_bins;
    RETURN NULL;
END $$;
CREATE TRIGGER activity_runs_rollups_truncate AFTER TRUNCATE ON activity_runs
    FOR EACH STATEMENT EXECUTE FUNCTION acp_run_rollups_truncate();

-- The runs written before this migration.
INSERT INTO run_rollups (bucket_seconds, bucket, activity_id, trigger_type, status, runs)
SELECT g.s, date_bin(make_interval(secs => g.s), r.created_at, timestamptz '1970-01-01 00:00:00+00'),
       r.activity_id, r.trigger_type, r.status, count(*)
  FROM activity_runs r CROSS JOIN (VALUES (60), (3600), (86400)) AS g(s)
 GROUP BY 1, 2, 3, 4, 5;
INSERT INTO run_rollup_bins (bucket_seconds, bucket, activity_id, trigger_type, status, bin, n)
SELECT g.s, date_bin(make_interval(secs => g.s), r.created_at, timestamptz '1970-01-01 00:00:00+00'),
       r.activity_id, r.trigger_type, r.status, acp_duration_bin(r.started_at, r.finished_at), count(*)
  FROM activity_runs r CROSS JOIN (VALUES (60), (3600), (86400)) AS g(s)
 WHERE r.started_at IS NOT NULL AND r.finished_at IS NOT NULL
 GROUP BY 1, 2, 3, 4, 5, 6;
