"""Encodes CloudEvents into HTTP requests with the CloudEvents Python SDK
(PyPI `cloudevents`, pinned in scripts/lib/services.sh), for tests/cloudevents.rs:
an encoder independent of this service decides what the three HTTP modes
look like on the wire.

stdin: {"events": [{"attributes": {...}, "data": ...}, ...]}, where a
`time` attribute is an RFC 3339 string. stdout: a JSON list of requests,
{"mode", "headers", "body_base64"}: one structured and one binary request
per event, then one batch request holding every event.
"""

import base64
import json
import sys
from datetime import datetime

from cloudevents.core.bindings import http
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent


def event_of(spec):
    attributes = dict(spec["attributes"])
    if "time" in attributes:
        attributes["time"] = datetime.fromisoformat(attributes["time"].replace("Z", "+00:00"))
    return CloudEvent(attributes=attributes, data=spec.get("data"))


def request(mode, headers, body):
    return {"mode": mode, "headers": dict(headers), "body_base64": base64.b64encode(body).decode()}


def main():
    specs = json.load(sys.stdin)["events"]
    events = [event_of(spec) for spec in specs]
    out = []
    for event in events:
        structured = http.to_structured_event(event)
        out.append(request("structured", structured.headers, structured.body))
        binary = http.to_binary_event(event)
        out.append(request("binary", binary.headers, binary.body))
    # The SDK has no batch writer; a batch is a JSON array of events in the
    # SDK's own JSON format (CloudEvents JSON format, section 4).
    fmt = JSONFormat()
    batch = b"[" + b",".join(fmt.write(event) for event in events) + b"]"
    out.append(request("batch", {"content-type": "application/cloudevents-batch+json"}, batch))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
