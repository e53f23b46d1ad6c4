-- A project's activities list reads its own range of the index, newest
-- first, like the list of every activity did. It also serves what the
-- index on `project_id` alone served (a project's live activities), which
-- goes.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

CREATE INDEX activities_project_list_idx
    ON activities (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
DROP INDEX activities_project_idx;
