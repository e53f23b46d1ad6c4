-- One clock (issue 12): the launcher records a fire that the cron trigger's
-- DST policy excludes as a `skipped` run with skip_reason `dst_policy`.
-- The reason list is extended from whatever it is now (other migrations of
-- this release may add reasons too), not replaced by a list written here.
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
     WHERE conname = 'activity_runs_skip_reason_check' AND conrelid = 'activity_runs'::regclass;
    IF def IS NOT NULL AND position('''dst_policy''' IN def) = 0 THEN
        ALTER TABLE activity_runs DROP CONSTRAINT activity_runs_skip_reason_check;
        -- def reads CHECK (((skip_reason IS NULL) OR (skip_reason = ANY (ARRAY['misfire'::text, ...])))).
        EXECUTE 'ALTER TABLE activity_runs ADD CONSTRAINT activity_runs_skip_reason_check '
            || replace(def, 'ARRAY[', 'ARRAY[''dst_policy''::text, ');
    END IF;
END $$;
