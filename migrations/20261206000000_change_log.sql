-- The change log behind GET /v1/stream (issue 28).
--
-- Triggers write every change of runs, tasks, activities, alerts and event
-- dispatches into change_inbox in the same transaction as the change, so a
-- change is logged exactly when it commits, whoever makes it (API, worker,
-- reconciler, an operator's SQL). The inbox has no order a reader can trust
-- (ids are taken before commit, transactions commit in any order), so one
-- sequencer at a time (a duty with a lease, see service::duties) moves the
-- committed rows into change_log, numbering them: the sequencer's
-- transactions commit one after another, so `seq` only grows in commit
-- order, and a reader that has seen `seq = n` has seen every change up to n.

CREATE TABLE change_inbox (
    id           bigserial   PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind         text        NOT NULL,
    activity_id  uuid,
    subject      text        NOT NULL,
    data         jsonb       NOT NULL
);

CREATE TABLE change_log (
    seq          bigint      PRIMARY KEY,
    at           timestamptz NOT NULL,
    kind         text        NOT NULL,
    activity_id  uuid,
    subject      text        NOT NULL,
    data         jsonb       NOT NULL
);
CREATE INDEX change_log_at_idx ON change_log (at);

CREATE SEQUENCE change_log_seq AS bigint;

-- No NOTIFY here: a transaction that notifies takes a cluster-wide lock
-- while it commits, which would put every run and dispatch write in one
-- queue. The sequencer looks every 50 ms instead.
CREATE FUNCTION acp_log_change(kind text, activity uuid, subject text, data jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_inbox (kind, activity_id, subject, data)
    VALUES (kind, activity, subject, data);
END $$;

CREATE FUNCTION acp_run_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    facts jsonb := jsonb_build_object(
        'run_id', NEW.run_id, 'activity_id', NEW.activity_id, 'workflow_id', NEW.workflow_id,
        'trigger_type', NEW.trigger_type, 'scheduled_for', NEW.scheduled_for,
        'status', NEW.status, 'skip_reason', NEW.skip_reason, 'attempt', NEW.attempt,
        'started_at', NEW.started_at, 'finished_at', NEW.finished_at, 'error', NEW.error);
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM acp_log_change('run.created', NEW.activity_id, NEW.run_id::text, facts);
    ELSIF NEW.attempt IS DISTINCT FROM OLD.attempt THEN
        PERFORM acp_log_change('run.retried', NEW.activity_id, NEW.run_id::text,
            facts || jsonb_build_object('previous_status', OLD.status));
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        PERFORM acp_log_change(
            CASE WHEN NEW.status IN ('cancelled', 'timed_out') THEN 'run.cancelled'
                 ELSE 'run.status_changed' END,
            NEW.activity_id, NEW.run_id::text,
            facts || jsonb_build_object('previous_status', OLD.status));
    ELSIF NEW.cancel_requested_at IS DISTINCT FROM OLD.cancel_requested_at
          AND NEW.cancel_requested_at IS NOT NULL THEN
        PERFORM acp_log_change('run.cancel_requested', NEW.activity_id, NEW.run_id::text,
            facts || jsonb_build_object('reason', NEW.cancel_reason));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER activity_runs_change AFTER INSERT OR UPDATE ON activity_runs
    FOR EACH ROW EXECUTE FUNCTION acp_run_changed();

CREATE FUNCTION acp_task_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    activity uuid;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status
       AND NEW.started_at IS NOT DISTINCT FROM OLD.started_at THEN
        RETURN NULL;
    END IF;
    SELECT activity_id INTO activity FROM activity_runs WHERE run_id = NEW.run_id;
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

CREATE FUNCTION acp_activity_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    facts jsonb := jsonb_build_object(
        'id', NEW.id, 'name', NEW.name, 'version', NEW.version, 'enabled', NEW.enabled,
        'trigger_type', NEW.trigger_type, 'paused', NEW.paused, 'pause_note', NEW.pause_note,
        'sync_state', NEW.sync_state, 'deleted', NEW.deleted_at IS NOT NULL);
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM acp_log_change('activity.created', NEW.id, NEW.id::text, facts);
        RETURN NULL;
    END IF;
    IF NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL THEN
        PERFORM acp_log_change('activity.deleted', NEW.id, NEW.id::text, facts);
        RETURN NULL;
    END IF;
    IF NEW.version IS DISTINCT FROM OLD.version THEN
        PERFORM acp_log_change('activity.updated', NEW.id, NEW.id::text, facts);
    END IF;
    IF NEW.paused AND NOT OLD.paused THEN
        PERFORM acp_log_change('activity.paused', NEW.id, NEW.id::text, facts);
    ELSIF OLD.paused AND NOT NEW.paused THEN
        PERFORM acp_log_change('activity.resumed', NEW.id, NEW.id::text, facts);
    END IF;
    IF NEW.sync_state IS DISTINCT FROM OLD.sync_state THEN
        PERFORM acp_log_change('activity.sync_state', NEW.id, NEW.id::text,
            facts || jsonb_build_object('previous_sync_state', OLD.sync_state,
                                        'last_sync_error', NEW.last_sync_error));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER activities_change AFTER INSERT OR UPDATE ON activities
    FOR EACH ROW EXECUTE FUNCTION acp_activity_changed();

CREATE FUNCTION acp_alert_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    facts jsonb := jsonb_build_object(
        'id', NEW.id, 'activity_id', NEW.activity_id, 'kind', NEW.kind,
        'summary', NEW.summary, 'opened_at', NEW.opened_at, 'resolved_at', NEW.resolved_at);
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM acp_log_change('alert.opened', NEW.activity_id, NEW.id::text, facts);
    ELSIF NEW.resolved_at IS NOT NULL AND OLD.resolved_at IS NULL THEN
        PERFORM acp_log_change('alert.resolved', NEW.activity_id, NEW.id::text, facts);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER alerts_change AFTER INSERT OR UPDATE ON alerts
    FOR EACH ROW EXECUTE FUNCTION acp_alert_changed();

-- A dispatch is logged when it settles (started, duplicate, debounced), not
-- when the event is accepted: ingest stays one statement per batch, and the
-- run it starts is logged by its own row.
CREATE FUNCTION acp_dispatch_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'completed' AND (TG_OP = 'INSERT' OR OLD.state IS DISTINCT FROM 'completed') THEN
        PERFORM acp_log_change('event.dispatched', NEW.activity_id, NEW.event_id,
            jsonb_build_object('event_id', NEW.event_id, 'activity_id', NEW.activity_id,
                'workflow_id', NEW.workflow_id, 'run_id', NEW.run_id, 'outcome', NEW.outcome));
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER event_dispatches_change AFTER INSERT OR UPDATE ON event_dispatches
    FOR EACH ROW EXECUTE FUNCTION acp_dispatch_changed();

-- Short-lived, read-only tokens for browsers' EventSource (which cannot set
-- headers): only their SHA-256 is kept; each is bound to the key that asked.
CREATE TABLE stream_tokens (
    secret_sha256 bytea       PRIMARY KEY CHECK (length(secret_sha256) = 32),
    key_id        uuid        NOT NULL REFERENCES api_keys (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX stream_tokens_expiry_idx ON stream_tokens (expires_at);

-- How far the log has been pruned: a reader resuming after an older `seq`
-- has missed changes and must reload.
CREATE TABLE change_log_meta (
    id              integer PRIMARY KEY CHECK (id = 1),
    pruned_through  bigint  NOT NULL
);
INSERT INTO change_log_meta (id, pruned_through) VALUES (1, 0);
