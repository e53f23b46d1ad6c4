-- An edit of a business calendar re-plans every live activity whose
-- trigger names it: one `activity.replanned` change each on the change
-- stream, written in the edit's own transaction (after its
-- `calendar.updated`), so a dashboard refreshes those activities' next
-- fires and timeline.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';
CREATE FUNCTION acp_calendar_replanned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.version IS NOT DISTINCT FROM OLD.version THEN
        RETURN NULL;
    END IF;
    PERFORM acp_log_change('activity.replanned', a.id, a.id::text,
            jsonb_build_object(
                'id', a.id, 'name', a.name, 'version', a.version,
                'calendar_id', NEW.id, 'calendar_name', NEW.name,
                'calendar_version', NEW.version,
                'previous_calendar_version', OLD.version))
       FROM activities a
      WHERE a.deleted_at IS NULL
        AND a.definition -> 'trigger' -> 'calendar' IS NOT NULL
        AND (a.definition -> 'trigger' -> 'calendar' ->> 'id') = NEW.id::text;
    RETURN NULL;
END $$;

-- Named to fire after `calendars_change` (triggers fire in name order).
CREATE TRIGGER calendars_replan AFTER UPDATE ON calendars
    FOR EACH ROW EXECUTE FUNCTION acp_calendar_replanned();
