-- The events-per-second quota: one token bucket per project with the quota,
-- shared by every replica. Ingest takes tokens in one statement (an upsert
-- that refills by the time passed, then takes what is there); the row is
-- created by the first taking and follows the project's quota as it
-- changes.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

CREATE TABLE project_event_buckets (
    project_id  text             NOT NULL,
    -- Tokens left at `refilled_at` (fractions refill over time).
    tokens      double precision NOT NULL,
    refilled_at timestamptz      NOT NULL,
    -- The last taking's grant: what its statement returns.
    granted     bigint           NOT NULL,
    CONSTRAINT project_event_buckets_pkey PRIMARY KEY (project_id),
    CONSTRAINT project_event_buckets_project_fkey FOREIGN KEY (project_id)
        REFERENCES projects (id) ON DELETE CASCADE
);
