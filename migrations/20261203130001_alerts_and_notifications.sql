-- Alerts (broken expectations of an activity) and notifications (run and
-- alert events POSTed to subscribers, delivered by Temporal).

-- One row per incident: opened when an expectation breaks, resolved when it
-- holds again. At most one open alert per (activity, kind).
CREATE TABLE alerts (
    id            uuid        NOT NULL,
    activity_id   uuid        NOT NULL,
    kind          text        NOT NULL,
    summary       text        NOT NULL,
    -- The facts of the breach when it opened, refreshed while it stays open.
    detail        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    opened_at     timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz,
    CONSTRAINT alerts_pkey PRIMARY KEY (id),
    CONSTRAINT alerts_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id),
    CONSTRAINT alerts_kind_check
        CHECK (kind IN ('late_start', 'stuck', 'failure_streak', 'missed_fire')),
    CONSTRAINT alerts_resolved_check CHECK (resolved_at IS NULL OR resolved_at >= opened_at)
);

-- Once per incident: a second open alert of the same kind cannot exist.
CREATE UNIQUE INDEX alerts_one_open_key ON alerts (activity_id, kind) WHERE resolved_at IS NULL;
-- Keyset pagination, newest first, overall and per activity.
CREATE INDEX alerts_list_idx ON alerts (opened_at DESC, id DESC);
CREATE INDEX alerts_activity_idx ON alerts (activity_id, opened_at DESC, id DESC);

-- Namespace-wide notification subscriptions.
CREATE TABLE subscriptions (
    id           uuid        NOT NULL,
    url          text        NOT NULL,
    -- Names a worker environment variable; the secret itself is never stored.
    secret_ref   text,
    -- Notification types wanted; empty means all.
    types        text[]      NOT NULL DEFAULT '{}',
    -- Only this activity's notifications, when set.
    activity_id  uuid,
    description  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    deleted_at   timestamptz,
    CONSTRAINT subscriptions_pkey PRIMARY KEY (id)
);

CREATE INDEX subscriptions_list_idx ON subscriptions (created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- The outbox: one row per thing that happened. `id` is the CloudEvent id.
CREATE TABLE notifications (
    id             uuid        NOT NULL DEFAULT gen_random_uuid(),
    -- Creation order: deliveries of one subject to one destination follow it.
    seq            bigserial   NOT NULL,
    type           text        NOT NULL,
    activity_id    uuid        NOT NULL,
    -- The run or alert it is about.
    subject        text        NOT NULL,
    occurred_at    timestamptz NOT NULL DEFAULT now(),
    data           jsonb       NOT NULL,
    -- Set once a delivery row exists for every destination.
    fanned_out_at  timestamptz,
    CONSTRAINT notifications_pkey PRIMARY KEY (id),
    CONSTRAINT notifications_seq_key UNIQUE (seq),
    CONSTRAINT notifications_type_check CHECK (type IN ('run.succeeded', 'run.failed',
        'run.cancelled', 'run.skipped', 'alert.opened', 'alert.resolved'))
);

CREATE INDEX notifications_unfanned_idx ON notifications (seq) WHERE fanned_out_at IS NULL;

-- One notification to one destination (a subscription or one of the
-- activity's own `notify` targets). `id` is UUIDv5 over both.
CREATE TABLE notification_deliveries (
    id               uuid        NOT NULL,
    notification_id  uuid        NOT NULL,
    seq              bigint      NOT NULL,
    subject          text        NOT NULL,
    -- `subscription:{id}` or `activity:{activity_id}:{index}`.
    destination      text        NOT NULL,
    subscription_id  uuid,
    url              text        NOT NULL,
    secret_ref       text,
    state            text        NOT NULL DEFAULT 'pending',
    attempts         integer     NOT NULL DEFAULT 0,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    dispatched_at    timestamptz,
    finished_at      timestamptz,
    CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id),
    CONSTRAINT notification_deliveries_notification_fkey
        FOREIGN KEY (notification_id) REFERENCES notifications (id),
    CONSTRAINT notification_deliveries_subscription_fkey
        FOREIGN KEY (subscription_id) REFERENCES subscriptions (id),
    CONSTRAINT notification_deliveries_state_check
        CHECK (state IN ('pending', 'dispatched', 'delivered', 'failed'))
);

-- The dispatcher's work list and its in-order check.
CREATE INDEX notification_deliveries_open_idx ON notification_deliveries (destination, subject, seq)
    WHERE state IN ('pending', 'dispatched');
CREATE INDEX notification_deliveries_subscription_idx
    ON notification_deliveries (subscription_id, created_at DESC, id DESC);

-- Every attempt of every delivery, as the worker made it.
CREATE TABLE delivery_attempts (
    delivery_id   uuid        NOT NULL,
    attempt       integer     NOT NULL,
    attempted_at  timestamptz NOT NULL DEFAULT now(),
    status_code   integer,
    error         text,
    duration_ms   integer     NOT NULL DEFAULT 0,
    CONSTRAINT delivery_attempts_pkey PRIMARY KEY (delivery_id, attempt),
    CONSTRAINT delivery_attempts_delivery_fkey
        FOREIGN KEY (delivery_id) REFERENCES notification_deliveries (id)
);

-- A run that reaches a final status records a notification in the same
-- transaction, whichever path ended it (the run workflow, a recorded skip,
-- a cancellation), so no path can forget it and the run never waits on a
-- receiver. Only when someone may listen: a live subscription, or the
-- activity's own `notify` list.
CREATE FUNCTION acp_run_ended_notification() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IN ('succeeded', 'failed', 'cancelled', 'skipped')
       AND (TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status)
       AND (EXISTS (SELECT 1 FROM subscriptions WHERE deleted_at IS NULL)
            OR EXISTS (SELECT 1 FROM activities WHERE id = NEW.activity_id
                       AND jsonb_typeof(definition -> 'notify') = 'array'
                       AND jsonb_array_length(definition -> 'notify') > 0))
    THEN
        INSERT INTO notifications (type, activity_id, subject, data)
        VALUES ('run.' || NEW.status, NEW.activity_id, NEW.run_id::text, jsonb_build_object(
            'run_id', NEW.run_id,
            'activity_id', NEW.activity_id,
            'workflow_id', NEW.workflow_id,
            'trigger_type', NEW.trigger_type,
            'scheduled_for', NEW.scheduled_for,
            'event_id', NEW.event_id,
            'status', NEW.status,
            'skip_reason', NEW.skip_reason,
            'started_at', NEW.started_at,
            'finished_at', NEW.finished_at,
            'error', NEW.error));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER activity_runs_ended_notification
    AFTER INSERT OR UPDATE OF status ON activity_runs
    FOR EACH ROW EXECUTE FUNCTION acp_run_ended_notification();
