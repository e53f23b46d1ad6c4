-- The initial shape of activity-control-plane's source of truth.
-- Forward-only: later changes add migrations, never edit this one.

-- Activity definitions. `definition` is authoritative; the columns beside it
-- are derived from it in the same statement, for filtering and indexing.
CREATE TABLE activities (
    id               uuid        NOT NULL,
    version          bigint      NOT NULL,
    definition       jsonb       NOT NULL,
    name             text        NOT NULL,
    description      text,
    enabled          boolean     NOT NULL,
    trigger_type     text        NOT NULL,
    labels           jsonb       NOT NULL DEFAULT '{}'::jsonb,
    event_types      text[]      NOT NULL DEFAULT '{}',
    -- Paused by a user (pause/resume), independent of `enabled`.
    paused           boolean     NOT NULL DEFAULT false,
    pause_note       text,
    paused_at        timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    -- Soft delete: run history keeps pointing at the row.
    deleted_at       timestamptz,
    -- Schedule sync bookkeeping (PRODUCT.md section 3: the DB is the desired state).
    sync_state       text        NOT NULL,
    synced_version   bigint,
    last_synced_at   timestamptz,
    last_sync_error  text,
    -- Temporal's conflict token right after our last write: a different token
    -- later means somebody changed the schedule behind our back.
    schedule_conflict_token bytea,
    CONSTRAINT activities_pkey PRIMARY KEY (id),
    CONSTRAINT activities_trigger_type_check CHECK (trigger_type IN ('cron', 'interval', 'event')),
    CONSTRAINT activities_sync_state_check
        CHECK (sync_state IN ('synced', 'pending', 'error', 'not_applicable')),
    CONSTRAINT activities_version_check CHECK (version >= 1)
);

-- Newest-first keyset pagination over live activities.
CREATE INDEX activities_list_idx ON activities (created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX activities_labels_idx ON activities USING gin (labels jsonb_path_ops);
-- Event routing: which enabled activities subscribe to an event type.
CREATE INDEX activities_event_types_idx ON activities USING gin (event_types)
    WHERE deleted_at IS NULL AND trigger_type = 'event';
-- The reconciler's work list.
CREATE INDEX activities_unsynced_idx ON activities (updated_at) WHERE sync_state <> 'synced';

-- Every version of every definition, so a run can load exactly the version it runs.
CREATE TABLE activity_versions (
    activity_id  uuid        NOT NULL,
    version      bigint      NOT NULL,
    definition   jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT activity_versions_pkey PRIMARY KEY (activity_id, version),
    CONSTRAINT activity_versions_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id)
);

-- Every pause, so a timeline can say a nominal time was missed while paused.
CREATE TABLE activity_pauses (
    activity_id  uuid        NOT NULL,
    paused_at    timestamptz NOT NULL,
    resumed_at   timestamptz,
    CONSTRAINT activity_pauses_pkey PRIMARY KEY (activity_id, paused_at),
    CONSTRAINT activity_pauses_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id)
);

-- Nominal times asked for explicitly (backfill, resume's catch-up): the
-- launcher runs them whatever their lateness.
CREATE TABLE backfill_requests (
    activity_id    uuid        NOT NULL,
    scheduled_for  timestamptz NOT NULL,
    requested_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT backfill_requests_pkey PRIMARY KEY (activity_id, scheduled_for),
    CONSTRAINT backfill_requests_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id)
);

-- Idempotency-Key replay for POST creates.
CREATE TABLE idempotency_keys (
    scope         text        NOT NULL,
    key           text        NOT NULL,
    request_hash  text        NOT NULL,
    resource_id   uuid        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key)
);

-- One row per execution of RunActivityWorkflow. `run_id` is UUIDv5 over
-- `workflow_id`; the UNIQUE workflow_id is the contract's guarantee once
-- Temporal has forgotten a closed workflow.
CREATE TABLE activity_runs (
    run_id              uuid        NOT NULL,
    activity_id         uuid        NOT NULL,
    workflow_id         text        NOT NULL,
    trigger_type        text        NOT NULL,
    scheduled_for       timestamptz,
    event_id            text,
    status              text        NOT NULL,
    skip_reason         text,
    window_start        timestamptz,
    window_end          timestamptz,
    definition_version  bigint,
    context             jsonb       NOT NULL DEFAULT '{}'::jsonb,
    started_at          timestamptz,
    finished_at         timestamptz,
    error               text,
    tasks_total         integer     NOT NULL DEFAULT 0,
    tasks_succeeded     integer     NOT NULL DEFAULT 0,
    tasks_failed        integer     NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT activity_runs_pkey PRIMARY KEY (run_id),
    CONSTRAINT activity_runs_workflow_id_key UNIQUE (workflow_id),
    CONSTRAINT activity_runs_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id),
    CONSTRAINT activity_runs_trigger_type_check
        CHECK (trigger_type IN ('cron', 'interval', 'event', 'manual')),
    CONSTRAINT activity_runs_status_check
        CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled', 'skipped')),
    CONSTRAINT activity_runs_skip_reason_check
        CHECK (skip_reason IS NULL OR skip_reason IN ('misfire', 'catchup_limit', 'compressed'))
);

-- Keyset pagination, newest first, overall and per activity.
CREATE INDEX activity_runs_list_idx ON activity_runs (created_at DESC, run_id DESC);
CREATE INDEX activity_runs_activity_idx ON activity_runs (activity_id, created_at DESC, run_id DESC);
CREATE INDEX activity_runs_status_idx ON activity_runs (status, created_at DESC, run_id DESC);
CREATE INDEX activity_runs_scheduled_idx ON activity_runs (activity_id, scheduled_for);

-- One task of one run, executed as its own child workflow.
CREATE TABLE task_instances (
    id           uuid        NOT NULL,
    run_id       uuid        NOT NULL,
    workflow_id  text        NOT NULL,
    task_type    text        NOT NULL,
    task_index   integer     NOT NULL,
    name         text,
    status       text        NOT NULL,
    attempts     integer     NOT NULL DEFAULT 0,
    started_at   timestamptz,
    finished_at  timestamptz,
    output       jsonb,
    error        text,
    CONSTRAINT task_instances_pkey PRIMARY KEY (id),
    CONSTRAINT task_instances_workflow_id_key UNIQUE (workflow_id),
    CONSTRAINT task_instances_run_index_key UNIQUE (run_id, task_index),
    CONSTRAINT task_instances_run_fkey FOREIGN KEY (run_id) REFERENCES activity_runs (run_id),
    CONSTRAINT task_instances_status_check CHECK (status IN ('running', 'succeeded', 'failed'))
);

-- Inbound events, keyed by their stable ID.
CREATE TABLE events (
    event_id         text        NOT NULL,
    event_id_origin  text        NOT NULL,
    event_type       text        NOT NULL,
    source           text        NOT NULL,
    occurred_at      timestamptz,
    payload          jsonb       NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT events_pkey PRIMARY KEY (event_id),
    CONSTRAINT events_origin_check
        CHECK (event_id_origin IN ('client', 'idempotency_key', 'content_digest'))
);

CREATE INDEX events_list_idx ON events (received_at DESC, event_id DESC);
CREATE INDEX events_type_idx ON events (event_type, received_at DESC);

-- One dispatch per (event, activity): written before the start, completed
-- after, so a crash in between is finished by the sweeper and a re-delivery
-- long after Temporal's retention is still a duplicate.
CREATE TABLE event_dispatches (
    event_id      text        NOT NULL,
    activity_id   uuid        NOT NULL,
    workflow_id   text        NOT NULL,
    run_id        uuid        NOT NULL,
    -- The definition version current when the event arrived: what the run executes.
    definition_version bigint NOT NULL,
    state         text        NOT NULL,
    outcome       text,
    attempts      integer     NOT NULL DEFAULT 0,
    last_error    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    CONSTRAINT event_dispatches_pkey PRIMARY KEY (event_id, activity_id),
    CONSTRAINT event_dispatches_workflow_id_key UNIQUE (workflow_id),
    CONSTRAINT event_dispatches_event_fkey FOREIGN KEY (event_id) REFERENCES events (event_id),
    CONSTRAINT event_dispatches_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id),
    CONSTRAINT event_dispatches_state_check CHECK (state IN ('pending', 'completed')),
    CONSTRAINT event_dispatches_outcome_check CHECK (outcome IS NULL OR outcome IN ('started', 'duplicate'))
);

CREATE INDEX event_dispatches_pending_idx ON event_dispatches (created_at) WHERE state = 'pending';
