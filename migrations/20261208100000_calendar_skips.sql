-- Scheduled times a trigger's business calendar keeps from running are
-- recorded as skipped runs with the calendar's reason.
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
     WHERE conname = 'activity_runs_skip_reason_check' AND conrelid = 'activity_runs'::regclass;
    IF def IS NOT NULL AND position('''beyond_coverage''' IN def) = 0 THEN
        ALTER TABLE activity_runs DROP CONSTRAINT activity_runs_skip_reason_check;
        -- def reads CHECK (((skip_reason IS NULL) OR (skip_reason = ANY (ARRAY['misfire'::text, ...])))).
        EXECUTE 'ALTER TABLE activity_runs ADD CONSTRAINT activity_runs_skip_reason_check '
            || replace(def, 'ARRAY[', 'ARRAY[''holiday''::text, ''weekend''::text, ''blackout''::text, ''rolled''::text, ''beyond_coverage''::text, ');
    END IF;
END $$;

-- Which activities use a calendar: a calendar in use is not deleted.
CREATE INDEX activities_calendar_idx
    ON activities (((definition -> 'trigger' -> 'calendar' ->> 'id')))
    WHERE deleted_at IS NULL AND definition -> 'trigger' -> 'calendar' IS NOT NULL;
