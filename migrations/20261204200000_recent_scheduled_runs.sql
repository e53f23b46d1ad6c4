-- Fairness (issue 14): the event dispatchers hold event runs back only while
-- some schedule fires often (a scheduled run within the last minute); this
-- index answers "is there one" without reading the event runs of that minute.
CREATE INDEX activity_runs_recent_scheduled_idx ON activity_runs (scheduled_for)
    WHERE trigger_type IN ('cron', 'interval');
