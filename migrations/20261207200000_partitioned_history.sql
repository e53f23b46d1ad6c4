-- The change log, partitioned by day, so that retention drops whole
-- partitions instead of deleting rows from a table every writer uses.
--
-- Partitioned by `logged_at`, the time the sequencer numbered the change,
-- not by `at` (when the change happened): the sequencer's rows then always
-- land in the current partition, even a change whose transaction stayed
-- open past midnight, and `seq` grows with `logged_at`, so a partition
-- holds one contiguous run of `seq` and dropping the oldest partition
-- forgets a prefix of the log.
--
-- The primary key must hold the partition key: (seq, logged_at). Each
-- partition has its own b-tree on it, so a read `seq > n ORDER BY seq` is
-- a merge of one index range per partition (a few: retention plus the
-- partitions made ahead); a partition holding only older changes answers
-- with one index descent and no rows.
--
-- No default partition: a row must land in a partition made for it. The
-- `history_retention` duty makes them days ahead; should it not run for
-- that long, the sequencer's insert fails and changes wait in
-- change_inbox (written by the triggers, unaffected) until a partition
-- exists, rather than piling into a default partition that would have to
-- be split (under an exclusive lock) later. Without a default partition a
-- partition can also be detached CONCURRENTLY.
--
-- Other history: notifications and notification_deliveries are updated
-- (fan-out, delivery state) and referenced by foreign keys; delivery_attempts
-- is upserted on (delivery_id, attempt), a key a table partitioned by time
-- cannot enforce, and read by delivery without a time bound. They stay as
-- they are.

-- Fail fast rather than queue the sequencer (and every stream) behind a
-- long transaction that reads the log; run it again when quieter.
SET LOCAL lock_timeout = '10s';

ALTER TABLE change_log RENAME TO change_log_unpartitioned;
ALTER TABLE change_log_unpartitioned RENAME CONSTRAINT change_log_pkey
    TO change_log_unpartitioned_pkey;
DROP INDEX change_log_at_idx;

CREATE TABLE change_log (
    seq          bigint      NOT NULL,
    at           timestamptz NOT NULL,
    kind         text        NOT NULL,
    activity_id  uuid,
    subject      text        NOT NULL,
    data         jsonb       NOT NULL,
    logged_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT change_log_pkey PRIMARY KEY (seq, logged_at)
) PARTITION BY RANGE (logged_at);

-- One partition per UTC day, named change_log_pYYYYMMDD (the names the
-- duty makes and recognises), from the oldest kept change's day to three
-- days ahead. Existing rows keep their `at` as the time they were logged.
DO $$
DECLARE
    first_day date := coalesce(
        (SELECT min(at AT TIME ZONE 'UTC')::date FROM change_log_unpartitioned),
        (now() AT TIME ZONE 'UTC')::date);
    last_day  date := (now() AT TIME ZONE 'UTC')::date + 3;
    day       date;
BEGIN
    day := first_day;
    WHILE day <= last_day LOOP
        EXECUTE format(
            'CREATE TABLE %I PARTITION OF change_log FOR VALUES FROM (%L) TO (%L)',
            'change_log_p' || to_char(day, 'YYYYMMDD'),
            (day::timestamp AT TIME ZONE 'UTC'),
            ((day + 1)::timestamp AT TIME ZONE 'UTC'));
        day := day + 1;
    END LOOP;
END $$;

INSERT INTO change_log (seq, at, kind, activity_id, subject, data, logged_at)
SELECT seq, at, kind, activity_id, subject, data, at FROM change_log_unpartitioned;

DROP TABLE change_log_unpartitioned;

-- When the retention duty last passed (what GET /v1/retention's next pass
-- time is computed from, whichever process asks).
CREATE TABLE history_retention (
    id            integer     PRIMARY KEY CHECK (id = 1),
    last_pass_at  timestamptz
);
INSERT INTO history_retention (id, last_pass_at) VALUES (1, NULL);
