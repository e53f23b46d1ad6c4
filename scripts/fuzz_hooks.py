"""Schemathesis hooks for scripts/fuzz (SCHEMATHESIS_HOOKS=fuzz_hooks).

A DELETE removes what it names, so a fixed ID answers 204 once and 404 ever
after, and schemathesis could not tell a working DELETE from one whose every
call misses ("missing test data"). Before each DELETE of an activity, a
source, a subscription, a calendar or a project that names the placeholder ID scripts/fuzz set in
its config, this creates a fresh one through the API and deletes that
instead: every such call reaches the operation's logic. Calls naming any
other ID (a malformed one, a random UUID) go out as generated.

A generated `Acp-Project` header is sent as `default`, where the data are,
unless the headers were generated not to fit (see `acting_in_default`).

Environment (set by scripts/fuzz): ACP_FUZZ_BASE, ACP_FUZZ_TOKEN and, per
kind, ACP_FUZZ_DOOMED_<KIND> (the placeholder) and ACP_FUZZ_BODY_<KIND>
(the JSON body that creates one).
"""

import json
import os
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


def acting_in_default(case):
    """The fuzz's data are all in `default`: a generated `Acp-Project` names,
    but for `default`, a project that does not exist, and every call with it
    would be a 404 or, where schemathesis draws a header value without its
    pattern, a 400. Where the headers were generated to fit the document,
    the header is sent as `default`, so the calls reach the operation; where
    they were generated not to (negative mode), it goes out as generated and
    its 400 is checked. tests/acting_project.rs holds the unknown project's
    404 and the malformed name's 400."""
    headers = case.headers or {}
    meta = getattr(case, "_meta", None)
    if meta is not None:
        component = meta.components.get("header")
        mode = component.mode if component is not None else meta.generation.mode
        if str(mode) == "negative":
            return
    for name in list(headers):
        if name.lower() == "acp-project":
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
