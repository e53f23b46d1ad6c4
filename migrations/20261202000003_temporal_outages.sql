-- Periods in which the reconciler could not reach Temporal. A nominal time
-- that Temporal never fired (it was down, and the time fell outside the
-- catch-up window when it came back) has no run; the timeline uses these
-- rows to say so instead of guessing. `started_at` is the last successful
-- contact before the failure, so the period errs on the wide side.
CREATE TABLE temporal_outages (
    id          bigserial PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    detected_at timestamptz NOT NULL,
    ended_at    timestamptz,
    CHECK (ended_at IS NULL OR ended_at >= started_at)
);

-- At most one open outage.
CREATE UNIQUE INDEX temporal_outages_one_open ON temporal_outages ((ended_at IS NULL)) WHERE ended_at IS NULL;
CREATE INDEX temporal_outages_started_at ON temporal_outages (started_at);
