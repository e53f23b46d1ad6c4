-- Resume at any scale. A resume decides on every nominal time missed while
-- paused; an every-second job paused for 30 days misses 2.6 million. The
-- times it decides not to run are recorded as one span each, not one run row
-- each, so storage does not grow with the length of a pause: every nominal
-- time in [first_at, last_at] that has no run row was skipped for
-- skip_reason (the timeline expands the span; a run row, from a run before
-- the pause took effect or a later backfill, wins over the span).
CREATE TABLE skipped_spans (
    id                  bigint      GENERATED ALWAYS AS IDENTITY,
    activity_id         uuid        NOT NULL,
    first_at            timestamptz NOT NULL,
    last_at             timestamptz NOT NULL,
    -- How many nominal times the span skipped (for reading without expanding).
    times               bigint      NOT NULL,
    skip_reason         text        NOT NULL,
    definition_version  bigint      NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT skipped_spans_pkey PRIMARY KEY (id),
    CONSTRAINT skipped_spans_activity_fkey FOREIGN KEY (activity_id) REFERENCES activities (id),
    CONSTRAINT skipped_spans_order_check CHECK (first_at <= last_at AND times > 0),
    CONSTRAINT skipped_spans_reason_check CHECK (skip_reason IN ('catchup_limit', 'compressed'))
);

CREATE INDEX skipped_spans_activity_idx ON skipped_spans (activity_id, last_at);

-- The window a request chose for its run: a resume's compressed run reaches
-- back over the whole pause (to where the last covered window ended), which
-- the launcher cannot tell from the run rows alone when none ran before.
ALTER TABLE backfill_requests ADD COLUMN window_start timestamptz;
