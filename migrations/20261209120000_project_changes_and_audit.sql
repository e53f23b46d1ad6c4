-- Each change and each audit entry belongs to a project, so that the
-- stream and the audit log show a project's key only its own.
--
-- Changes of runs, tasks, alerts and dispatches name their activity; the
-- sequencer, which numbers the inbox one batch at a time, reads the
-- activity's project then, so the triggers on the busiest tables stay as
-- they are. Calendars and audit entries name their project themselves
-- (a deleted calendar's row is gone, an entry has no activity).
--
-- Calendar names are unique within a project: another project's name is
-- neither taken nor revealed by a refusal.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

ALTER TABLE change_inbox ADD COLUMN project_id text;
ALTER TABLE change_log ADD COLUMN project_id text NOT NULL DEFAULT 'default';

-- Rows logged since projects exist: theirs where the activity or the
-- calendar tells it (the rest are `default`'s).
UPDATE change_log c SET project_id = a.project_id
  FROM activities a
 WHERE a.id = c.activity_id AND a.project_id <> 'default';
UPDATE change_log c SET project_id = k.project_id
  FROM calendars k
 WHERE c.kind LIKE 'calendar.%' AND k.id::text = c.subject AND k.project_id <> 'default';

CREATE FUNCTION acp_log_change(kind text, activity uuid, subject text, data jsonb, project text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_inbox (kind, activity_id, subject, data, project_id)
    VALUES (kind, activity, subject, data, project);
END $$;

CREATE OR REPLACE FUNCTION acp_calendar_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
        NULL, rec.id::text, facts, rec.project_id);
    RETURN NULL;
END $$;

-- The entry's project is the caller's (an operator's is `default`).
ALTER TABLE audit_log ADD COLUMN project_id text NOT NULL DEFAULT 'default';
CREATE INDEX audit_log_project_idx ON audit_log (project_id, seq);

CREATE OR REPLACE FUNCTION acp_audit_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM acp_log_change('audit.recorded',
        CASE WHEN NEW.subject_type = 'activity' THEN NEW.subject_id::uuid END,
        NEW.seq::text,
        jsonb_build_object('seq', NEW.seq, 'at', NEW.at, 'key_id', NEW.key_id,
            'operation', NEW.operation,
            'subject_type', NEW.subject_type, 'subject_id', NEW.subject_id,
            'request_id', NEW.request_id),
        NEW.project_id);
    RETURN NULL;
END $$;

ALTER TABLE calendars DROP CONSTRAINT calendars_name_key;
ALTER TABLE calendars ADD CONSTRAINT calendars_name_key UNIQUE (project_id, name);

-- A project's lists, newest first.
DROP INDEX calendars_list_idx;
CREATE INDEX calendars_list_idx ON calendars (project_id, created_at DESC, id DESC);
DROP INDEX subscriptions_list_idx;
CREATE INDEX subscriptions_list_idx ON subscriptions (project_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
