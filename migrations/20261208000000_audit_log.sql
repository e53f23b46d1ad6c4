-- The audit log: which API key made which write to what. A write appends
-- its one entry in its own transaction, so an entry exists exactly when the
-- write committed. Append-only: nothing in the service updates or deletes
-- a row, and the trigger below refuses both.

CREATE TABLE audit_log (
    seq           bigserial   PRIMARY KEY,
    at            timestamptz NOT NULL DEFAULT now(),
    key_id        uuid,
    key_name      text,
    operation     text        NOT NULL,
    subject_type  text        NOT NULL,
    subject_id    text        NOT NULL,
    request_id    text        NOT NULL,
    change        jsonb       NOT NULL
);

-- The API lists newest first, filtered by key, operation or subject.
CREATE INDEX audit_log_key_idx ON audit_log (key_id, seq);
CREATE INDEX audit_log_operation_idx ON audit_log (operation, seq);
CREATE INDEX audit_log_subject_idx ON audit_log (subject_type, subject_id, seq);
CREATE INDEX audit_log_at_idx ON audit_log (at);

CREATE FUNCTION acp_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END $$;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION acp_audit_append_only();

-- Every entry is a change too, logged in the entry's transaction. The
-- stream is readable with `read`, the log only with `admin`: the change
-- names the entry, the key's ID and the operation, not the key's name nor
-- what changed (GET /v1/audit has both).
CREATE FUNCTION acp_audit_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM acp_log_change('audit.recorded',
        CASE WHEN NEW.subject_type = 'activity' THEN NEW.subject_id::uuid END,
        NEW.seq::text,
        jsonb_build_object('seq', NEW.seq, 'at', NEW.at, 'key_id', NEW.key_id,
            'operation', NEW.operation,
            'subject_type', NEW.subject_type, 'subject_id', NEW.subject_id,
            'request_id', NEW.request_id));
    RETURN NULL;
END $$;

CREATE TRIGGER audit_log_change AFTER INSERT ON audit_log
    FOR EACH ROW EXECUTE FUNCTION acp_audit_recorded();
