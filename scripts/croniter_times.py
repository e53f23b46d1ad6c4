"""Prints croniter's times for cron expressions, for tests/cron_conformance.rs.

Reads one JSON object on stdin:

    {"from": "2026-01-01T00:00:00", "to": "2031-01-01T00:00:00",
     "cases": [{"zone": "Europe/Berlin", "expr": "0 9 L * *"}, ...]}

and writes one JSON list on stdout: per case, in order, the Unix seconds of
croniter's times after `from` and up to `to` (wall clock in the zone).

croniter spells "the last Friday" `L5`; this service (as Quartz) spells it
`5L` or `FRIL`, which is rewritten here. Everything else is passed as is.
"""

import json
import re
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from croniter import croniter

DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


def croniter_spelling(expr: str) -> str:
    fields = expr.split()
    last = re.fullmatch(r"(\w+)L", fields[4], re.IGNORECASE)
    if last:
        day = last.group(1).upper()
        number = DAYS.index(day) if day in DAYS else int(day) % 7
        fields[4] = f"L{number}"
    return " ".join(fields)


def main() -> None:
    request = json.load(sys.stdin)
    out = []
    for case in request["cases"]:
        zone = ZoneInfo(case["zone"])
        start = datetime.fromisoformat(request["from"]).replace(tzinfo=zone)
        end = datetime.fromisoformat(request["to"]).replace(tzinfo=zone)
        it = croniter(croniter_spelling(case["expr"]), start)
        times = []
        while True:
            t = it.get_next(datetime)
            if t > end:
                break
            times.append(int(t.timestamp()))
        out.append(times)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
