-- A stream token keeps the project the request that made it acted in: an
-- operator key (of no project) chooses one with `Acp-Project`, and the
-- browser's EventSource that presents the token cannot send that header.
-- NULL (tokens made before) is the key's own project.
ALTER TABLE stream_tokens ADD COLUMN project_id text
    CONSTRAINT stream_tokens_project_fkey REFERENCES projects (id);
