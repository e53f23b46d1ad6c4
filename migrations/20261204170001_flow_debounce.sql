-- Flow control (issue 14): `flow.debounce` on event activities. A burst of
-- events of one key becomes one run of its last event; the others' dispatches
-- are completed `debounced` and name the run that took them.

-- The debounce key of a dispatch (NULL: not debounced), and until when a
-- later event of the key absorbs it (its arrival plus the period): the
-- dispatcher does not take it before then (its lease starts there).
ALTER TABLE event_dispatches
    ADD COLUMN debounce_key   text,
    ADD COLUMN debounce_until timestamptz,
    -- The run of the burst's last event, on each dispatch it absorbed.
    ADD COLUMN absorbed_by    uuid;

CREATE INDEX event_dispatches_debounce_idx ON event_dispatches (activity_id, debounce_key, created_at)
    WHERE debounce_key IS NOT NULL;

-- `debounced` joins the outcomes; the list is extended from whatever it is
-- now, not replaced by a list written here.
DO $$
DECLARE
    def text;
BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint
     WHERE conname = 'event_dispatches_outcome_check' AND conrelid = 'event_dispatches'::regclass;
    IF def IS NOT NULL AND position('''debounced''' IN def) = 0 THEN
        ALTER TABLE event_dispatches DROP CONSTRAINT event_dispatches_outcome_check;
        EXECUTE 'ALTER TABLE event_dispatches ADD CONSTRAINT event_dispatches_outcome_check '
            || replace(def, 'ARRAY[', 'ARRAY[''debounced''::text, ');
    END IF;
END $$;
