-- Business calendars: weekend days, holidays, added working days, blackout
-- windows and how far the calendar is known to be right.
--
-- The dates are JSONB arrays in the calendar's row rather than child
-- tables: a calendar is read and written whole (every question asked of it
-- needs all of it, every write replaces it at a new version), its counts
-- are bounded by the API, and no query looks up a date across calendars.

CREATE TABLE calendars (
    id            uuid        NOT NULL,
    name          text        NOT NULL,
    timezone      text        NOT NULL,
    weekend_days  smallint[]  NOT NULL,
    -- [{"date": "2026-07-03", "name": "Independence Day (observed)"}, ...]
    holidays      jsonb       NOT NULL DEFAULT '[]',
    -- [{"date": "2026-07-11", "name": null}, ...]
    working_days  jsonb       NOT NULL DEFAULT '[]',
    -- [{"from": "2026-12-24T18:00:00", "to": "...", "name": null}, ...],
    -- wall-clock times in the calendar's zone
    blackouts     jsonb       NOT NULL DEFAULT '[]',
    covered_until date,
    version       bigint      NOT NULL DEFAULT 1,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT calendars_pkey PRIMARY KEY (id),
    CONSTRAINT calendars_name_key UNIQUE (name)
);

CREATE INDEX calendars_list_idx ON calendars (created_at DESC, id DESC);

-- Calendar changes on the change stream, like activities'.
CREATE FUNCTION acp_calendar_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    rec calendars := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    facts jsonb := jsonb_build_object(
        'id', rec.id, 'name', rec.name, 'version', rec.version,
        'covered_until', rec.covered_until, 'deleted', TG_OP = 'DELETE');
BEGIN
    PERFORM acp_log_change(
        CASE TG_OP WHEN 'INSERT' THEN 'calendar.created'
                   WHEN 'DELETE' THEN 'calendar.deleted'
                   ELSE 'calendar.updated' END,
        NULL, rec.id::text, facts);
    RETURN NULL;
END $$;

CREATE TRIGGER calendars_change AFTER INSERT OR UPDATE OR DELETE ON calendars
    FOR EACH ROW EXECUTE FUNCTION acp_calendar_changed();
