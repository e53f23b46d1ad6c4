-- An activity's own `history_retention` (its definition's ISO-8601 text,
-- canonical: days, hours, minutes, seconds) as an interval of seconds, so
-- that run reads can hide the runs older than it and the retention duty
-- can keep partitions for the longest. NULL when the activity sets none.
-- IMMUTABLE: the designator form parses the same whatever the session's
-- settings, and seconds (not days) keep it free of the session's zone.
CREATE FUNCTION acp_history_retention(definition jsonb) RETURNS interval
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT make_interval(secs => extract(epoch FROM (definition ->> 'history_retention')::interval))
$$;
