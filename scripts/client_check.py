"""A client generated from openapi/openapi.json, calling the running service.

scripts/fuzz runs this after schemathesis, against the same `acp serve`:

    client_check.py GENERATED_DIR BASE_URL TOKEN

GENERATED_DIR holds the package `acp_client` that openapi-python-client made
from the committed document. The calls are what a dashboard or a backend
service would make first; an optional body (pause, resume) must be optional
in the generated functions too. Exits non-zero, saying why, on any surprise.
"""

import sys


def main() -> int:
    generated, base_url, token = sys.argv[1:4]
    sys.path.insert(0, generated)
    from acp_client import AuthenticatedClient
    from acp_client.api.activities import create_activity, get_activity
    from acp_client.api.schedules import pause_activity, resume_activity
    from acp_client.models import ActivityRequest, PauseRequest

    client = AuthenticatedClient(base_url=base_url, token=token, raise_on_unexpected_status=True)
    request = ActivityRequest.from_dict(
        {
            "name": "generated-client",
            "trigger": {"type": "interval", "every": "PT1H", "misfire_policy": "skip"},
            "tasks": [{"task_type": "noop"}],
        }
    )
    created = create_activity.sync_detailed(client=client, body=request)
    expect(created.status_code == 201, f"create: {created.status_code} {created.content!r}")
    activity_id = created.parsed.id

    # No body at all: the generated function must not need one.
    paused = pause_activity.sync_detailed(id=activity_id, client=client)
    expect(paused.status_code == 200, f"pause without a body: {paused.status_code} {paused.content!r}")
    expect(paused.parsed.paused is True, f"pause: {paused.content!r}")
    resumed = resume_activity.sync_detailed(id=activity_id, client=client)
    expect(resumed.status_code == 200, f"resume without a body: {resumed.status_code} {resumed.content!r}")
    expect(resumed.parsed.paused is False, f"resume: {resumed.content!r}")

    # With a body, its note arrives.
    noted = pause_activity.sync_detailed(id=activity_id, client=client, body=PauseRequest(note="maintenance"))
    expect(noted.status_code == 200 and noted.parsed.note == "maintenance", f"pause with a note: {noted.content!r}")

    fetched = get_activity.sync_detailed(id=activity_id, client=client)
    expect(fetched.status_code == 200, f"get: {fetched.status_code}")
    expect(str(fetched.parsed.schedule.sync_state) in ("synced", "SyncState.SYNCED"), f"get: {fetched.content!r}")

    # A backend service posting events: one, then a batch.
    from acp_client.api.events import ingest_event, ingest_events_batch
    from acp_client.models import EventBatchRequest, EventRequest

    one = ingest_event.sync_detailed(
        client=client,
        body=EventRequest.from_dict(
            {"event_id": "client-check-1", "event_type": "client.checked", "source": "client_check", "payload": {"n": 1}}
        ),
    )
    expect(one.status_code in (200, 202), f"ingest: {one.status_code} {one.content!r}")
    expect(one.parsed.event_id == "client-check-1", f"ingest: {one.content!r}")
    batch = ingest_events_batch.sync_detailed(
        client=client,
        body=EventBatchRequest.from_dict(
            {
                "events": [
                    {"event_id": f"client-check-b{i}", "event_type": "client.checked", "source": "client_check", "payload": {"n": i}}
                    for i in range(3)
                ]
            }
        ),
    )
    expect(batch.status_code == 200, f"batch: {batch.status_code} {batch.content!r}")
    statuses = [item.status for item in batch.parsed.items]
    expect(statuses == [200, 200, 200], f"batch: {batch.content!r}")
    print("generated client: create, pause and resume without a body, pause with a note, get, one event, a batch: ok")
    return 0


def expect(condition: bool, message: str) -> None:
    if not condition:
        print(f"generated client check failed: {message}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    sys.exit(main())
