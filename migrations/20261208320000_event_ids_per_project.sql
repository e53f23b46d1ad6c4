-- Event IDs are unique per project: two teams' producers choose their IDs
-- independently, so the same ID in two projects names two events. An
-- event is keyed by (project_id, event_id); its dispatches and conflicting
-- re-deliveries name its project to reference it. A dispatch's activity is
-- of the same project (routing stays within the project), so a run's
-- workflow ID `activity-{activity_id}:{event_id}` stays unique.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

ALTER TABLE event_dispatches ADD COLUMN project_id text NOT NULL DEFAULT 'default';
ALTER TABLE event_conflicts ADD COLUMN project_id text NOT NULL DEFAULT 'default';

-- Events received before now may have been recorded in any project: the
-- rows that reference one take its project.
UPDATE event_dispatches d SET project_id = e.project_id
  FROM events e WHERE e.event_id = d.event_id AND e.project_id <> 'default';
UPDATE event_conflicts c SET project_id = e.project_id
  FROM events e WHERE e.event_id = c.event_id AND e.project_id <> 'default';

ALTER TABLE event_dispatches DROP CONSTRAINT event_dispatches_event_fkey;
ALTER TABLE event_conflicts DROP CONSTRAINT event_conflicts_event_fkey;

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (project_id, event_id);

ALTER TABLE event_dispatches ADD CONSTRAINT event_dispatches_event_fkey
    FOREIGN KEY (project_id, event_id) REFERENCES events (project_id, event_id);
ALTER TABLE event_conflicts ADD CONSTRAINT event_conflicts_event_fkey
    FOREIGN KEY (project_id, event_id) REFERENCES events (project_id, event_id)
    ON DELETE CASCADE;

-- Every read of events is a project's: its list (newest first, by type),
-- its rate over the last minute, an event's conflicts.
DROP INDEX events_list_idx;
DROP INDEX events_type_idx;
CREATE INDEX events_list_idx ON events (project_id, received_at DESC, event_id DESC);
CREATE INDEX events_type_idx ON events (project_id, event_type, received_at DESC);
DROP INDEX event_conflicts_event_idx;
CREATE INDEX event_conflicts_event_idx ON event_conflicts (project_id, event_id, id);

-- A project's sources, newest first.
DROP INDEX sources_list_idx;
CREATE INDEX sources_list_idx ON sources (project_id, created_at DESC, id DESC);

-- A source's name is unique in its project: a name taken in another
-- project is no answer to give (it would tell that the other exists).
ALTER TABLE sources DROP CONSTRAINT sources_name_key;
ALTER TABLE sources ADD CONSTRAINT sources_name_key UNIQUE (project_id, name);
