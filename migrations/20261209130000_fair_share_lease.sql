-- Fair share: the dispatchers lease pending dispatches across projects by
-- weight, each activity's oldest first, so each round reads a few of each
-- activity's pending rows (not the whole backlog in arrival order), and what
-- each competing project has leased now.

-- Fail fast rather than queue every writer behind this migration.
SET LOCAL lock_timeout = '10s';

-- Each activity's pending dispatches, oldest first.
CREATE INDEX event_dispatches_pending_activity_idx ON event_dispatches (activity_id, created_at)
    WHERE state = 'pending';

-- Pending dispatches held by a lease (being started, waiting to retry, or
-- debounced): few at any time, whatever the backlog.
CREATE INDEX event_dispatches_leased_idx ON event_dispatches (activity_id)
    WHERE state = 'pending' AND leased_until IS NOT NULL;
