"""Schemathesis hooks for scripts/fuzz (SCHEMATHESIS_HOOKS=fuzz_hooks).

A DELETE removes what it names, so a fixed ID answers 204 once and 404 ever
after, and schemathesis could not tell a working DELETE from one whose every
call misses ("missing test data"). Before each DELETE of an activity, a
source, a subscription, a calendar or a project that names the placeholder ID scripts/fuzz set in
its config, this creates a fresh one through the API and deletes that
instead: every such call reaches the operation's logic. Calls naming any
other ID (a malformed one, a random UUID) go out as generated.

A generated `Acp-Project` header that names a project is sent as `default`,
where the data are (see `acting_in_default`).

Environment (set by scripts/fuzz): ACP_FUZZ_BASE, ACP_FUZZ_TOKEN and, per
kind, ACP_FUZZ_DOOMED_<KIND> (the placeholder) and ACP_FUZZ_BODY_<KIND>
(the JSON body that creates one).
"""

import json
import os
import re
import urllib.request
import uuid

import schemathesis

COLLECTIONS = {
    "/v1/activities/{id}": "ACTIVITY",
    "/v1/sources/{id}": "SOURCE",
    "/v1/subscriptions/{id}": "SUBSCRIPTION",
    "/v1/calendars/{id}": "CALENDAR",
    "/v1/projects/{id}": "PROJECT",
}


def create(collection: str, kind: str) -> str:
    body = os.environ[f"ACP_FUZZ_BODY_{kind}"]
    if kind in ("SOURCE", "CALENDAR"):
        # Source and calendar names are unique.
        document = json.loads(body)
        document["name"] = f"fuzz-doomed-{uuid.uuid4()}"
        body = json.dumps(document)
    if kind == "PROJECT":
        # A project's ID is its slug, never given twice.
        document = json.loads(body)
        document["id"] = f"fuzz-doomed-{uuid.uuid4().hex[:12]}"
        body = json.dumps(document)
    request = urllib.request.Request(
        os.environ["ACP_FUZZ_BASE"] + collection,
        data=body.encode(),
        method="POST",
        headers={"Authorization": "Bearer " + os.environ["ACP_FUZZ_TOKEN"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.load(response)["id"]


# A project name as the document's pattern allows it.
PROJECT_NAME = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


def acting_in_default(case):
    """A schema-valid `Acp-Project` names, but for `default`, a project that
    does not exist (the fuzz's data are all in `default`), and every call
    with it would be a 404 ("missing test data"): it is sent as `default`.
    A value the pattern refuses goes out as generated (its 400 is checked);
    tests/acting_project.rs holds the unknown project's 404."""
    headers = case.headers or {}
    for name, value in headers.items():
        if name.lower() == "acp-project" and isinstance(value, str) and PROJECT_NAME.match(value):
            headers[name] = "default"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    acting_in_default(case)
    if case.method.upper() != "DELETE":
        return
    kind = COLLECTIONS.get(case.path)
    if kind is None:
        return
    params = case.path_parameters or {}
    if str(params.get("id")) != os.environ.get(f"ACP_FUZZ_DOOMED_{kind}"):
        return
    params["id"] = create(case.path.rsplit("/", 1)[0], kind)
