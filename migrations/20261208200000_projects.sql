-- Projects: the teams sharing the service, each owning its activities,
-- sources, subscriptions, calendars and API keys. Everything that exists
-- already moves into the project `default`, which cannot be deleted.
--
-- Runs, task instances, dispatches, alerts and changes belong to a project
-- through their activity and get no column: their reads start from an
-- activity or join the (small) activities table. Events do get one: an
-- event has no activity (it reaches zero or many through its dispatches),
-- it is received for the key's project, and the events list and the
-- per-project event rate read it on the ingest's hot table.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

CREATE TABLE projects (
    id          text        NOT NULL,
    name        text        NOT NULL,
    -- Its share of the workers against other projects' (fair share).
    weight      integer     NOT NULL DEFAULT 1,
    -- Quotas: NULL is unlimited (and a CHECK passes on NULL, so each is
    -- checked only when set).
    quota_activities         integer,
    quota_events_per_second  integer,
    quota_events_burst       integer,
    quota_runs_running       integer,
    quota_sources            integer,
    quota_subscriptions      integer,
    version     bigint      NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- A deleted project's row stays: the history of what it owned (deleted
    -- activities and their runs, revoked keys) still names it, and its ID is
    -- not given to another team.
    deleted_at  timestamptz,
    CONSTRAINT projects_pkey PRIMARY KEY (id),
    CONSTRAINT projects_id_check CHECK (id ~ '^[a-z][a-z0-9-]{0,62}$'),
    CONSTRAINT projects_name_check CHECK (length(name) BETWEEN 1 AND 200),
    CONSTRAINT projects_weight_check CHECK (weight >= 1),
    CONSTRAINT projects_quotas_check CHECK (
        quota_activities >= 0 AND quota_runs_running >= 0 AND quota_sources >= 0
        AND quota_subscriptions >= 0 AND quota_events_per_second >= 0
        AND quota_events_burst >= 1
    ),
    CONSTRAINT projects_burst_check
        CHECK (quota_events_burst IS NULL OR quota_events_per_second IS NOT NULL),
    CONSTRAINT projects_version_check CHECK (version >= 1)
);

CREATE INDEX projects_list_idx ON projects (created_at DESC, id DESC) WHERE deleted_at IS NULL;

INSERT INTO projects (id, name) VALUES ('default', 'Default');

ALTER TABLE activities ADD COLUMN project_id text NOT NULL DEFAULT 'default'
    CONSTRAINT activities_project_fkey REFERENCES projects (id);
ALTER TABLE sources ADD COLUMN project_id text NOT NULL DEFAULT 'default'
    CONSTRAINT sources_project_fkey REFERENCES projects (id);
ALTER TABLE subscriptions ADD COLUMN project_id text NOT NULL DEFAULT 'default'
    CONSTRAINT subscriptions_project_fkey REFERENCES projects (id);
ALTER TABLE calendars ADD COLUMN project_id text NOT NULL DEFAULT 'default'
    CONSTRAINT calendars_project_fkey REFERENCES projects (id);

-- A project's live activities: its usage now, its lists later.
CREATE INDEX activities_project_idx ON activities (project_id) WHERE deleted_at IS NULL;

-- Events: no foreign key (history outlives what received it, and the
-- ingest's inserts stay free of the check).
ALTER TABLE events ADD COLUMN project_id text NOT NULL DEFAULT 'default';

-- Keys: an `operator` key has no project and manages projects; every other
-- key belongs to exactly one. Existing keys keep their scope in `default`.
ALTER TABLE api_keys ADD COLUMN project_id text DEFAULT 'default'
    CONSTRAINT api_keys_project_fkey REFERENCES projects (id);
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check
    CHECK (scope IN ('read', 'write', 'events', 'admin', 'operator'));
ALTER TABLE api_keys ADD CONSTRAINT api_keys_project_check
    CHECK ((scope = 'operator') = (project_id IS NULL));
