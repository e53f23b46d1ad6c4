-- Event ingest answers once an event and its dispatch rows are committed; a
-- dispatcher in every API process starts the runs. A dispatcher leases the
-- rows it works on (`leased_until`), so replicas share the pending rows
-- without starting one twice, and a lease that lapses (the process died)
-- hands the row to the next dispatcher. A request that waits for its own
-- starts (`Prefer: wait`) leases its rows briefly at claim time.
ALTER TABLE event_dispatches ADD COLUMN leased_until timestamptz;
