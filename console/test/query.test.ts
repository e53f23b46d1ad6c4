// The list views' filters: what a URL's query becomes, and what the API is asked.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
    activitiesQuery,
    activityFilterOf,
    alertFilterOf,
    alertsQuery,
    bulkFilterOf,
    bulkStatuses,
    eventFilterOf,
    eventsQuery,
    outcomeWords,
    pageQuery,
    runFilterOf,
    runsQuery,
    streamQuery,
} from "../src/api/query.js";

const q = (s: string) => new URLSearchParams(s);

describe("pageQuery", () => {
    test("the first page has no cursor", () => {
        assert.deepEqual(pageQuery(""), { limit: 50 });
        assert.deepEqual(pageQuery(null, 200), { limit: 200 });
        assert.deepEqual(pageQuery(undefined), { limit: 50 });
    });
    test("a later page sends its cursor", () => {
        assert.deepEqual(pageQuery("c2", 15), { limit: 15, cursor: "c2" });
    });
});

describe("runFilterOf and runsQuery", () => {
    const cases: [string, string, object][] = [
        ["no filter", "", {}],
        [
            "every field",
            "status=failed&trigger=cron&activity=a1&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z",
            { status: "failed", trigger_type: "cron", activity_id: "a1", scheduled_after: "2026-01-01T00:00:00Z", scheduled_before: "2026-01-02T00:00:00Z" },
        ],
        ["a status the API does not know is left out", "status=exploded&trigger=manual", { trigger_type: "manual" }],
        ["a trigger the API does not know is left out", "trigger=hourly&status=timed_out", { status: "timed_out" }],
        ["empty values are no filter", "status=&activity=&from=", {}],
        ["the cursor and the zone are not filters", "cursor=abc&tz=utc&status=queued", { status: "queued" }],
    ];
    for (const [name, query, want] of cases) {
        test(name, () => assert.deepEqual(runFilterOf(q(query)), want));
    }
    test("the API query adds the page", () => {
        assert.deepEqual(runsQuery(runFilterOf(q("status=running&activity=a1")), "next", 200), { status: "running", activity_id: "a1", limit: 200, cursor: "next" });
        assert.deepEqual(runsQuery({}, ""), { limit: 50 });
    });
});

describe("bulk actions on the runs filter", () => {
    test("the activity is in the path, not the body", () => {
        assert.deepEqual(bulkFilterOf({ activity_id: "a1", status: "failed", scheduled_after: "2026-01-01T00:00:00Z" }), {
            status: "failed",
            scheduled_after: "2026-01-01T00:00:00Z",
        });
        assert.deepEqual(bulkFilterOf({ activity_id: "a1" }), {});
    });
    const cases: [string, "retry" | "cancel", string, string[]][] = [
        ["retry acts on failed and cancelled runs", "retry", "", ["failed", "cancelled"]],
        ["cancel acts on running and queued runs", "cancel", "", ["running", "queued"]],
        ["a status filter narrows it", "retry", "status=cancelled", ["cancelled"]],
        ["retrying running runs matches nothing", "retry", "status=running", []],
        ["cancelling succeeded runs matches nothing", "cancel", "status=succeeded", []],
    ];
    for (const [name, kind, query, want] of cases) {
        test(name, () => assert.deepEqual(bulkStatuses(kind, runFilterOf(q(query))), want));
    }
    test("outcomes in words", () => {
        assert.equal(
            outcomeWords(
                new Map([
                    ["retried", 2],
                    ["cancel_requested", 1],
                ]),
            ),
            "2 retried, 1 cancel requested",
        );
        assert.equal(outcomeWords(new Map()), "nothing matched");
    });
});

describe("activityFilterOf and activitiesQuery", () => {
    test("no filter asks for the summaries of the first page", () => {
        const f = activityFilterOf(q(""));
        assert.deepEqual(f, { text: "", label: "", kind: "" });
        assert.deepEqual(activitiesQuery(f, ""), { include: "summary", limit: 50 });
    });
    test("text, label and kind", () => {
        const f = activityFilterOf(q("q=nightly&label=team%3Dops&kind=cron&cursor=c"));
        assert.deepEqual(f, { text: "nightly", label: "team=ops", kind: "cron" });
        assert.deepEqual(activitiesQuery(f, "c"), { include: "summary", q: "nightly", label: "team=ops", trigger_type: "cron", limit: 50, cursor: "c" });
    });
    test("a kind that is no trigger kind is no filter", () => {
        assert.equal(activityFilterOf(q("kind=manual")).kind, "");
    });
});

describe("alertFilterOf and alertsQuery", () => {
    test("state, kind and activity", () => {
        const f = alertFilterOf(q("state=open&kind=failure_streak&activity=a1"));
        assert.deepEqual(f, { state: "open", kind: "failure_streak", activity: "a1" });
        assert.deepEqual(alertsQuery(f, ""), { state: "open", kind: "failure_streak", activity_id: "a1", limit: 50 });
    });
    test("unknown state and kind are no filter", () => {
        const f = alertFilterOf(q("state=closed&kind=meltdown"));
        assert.deepEqual(f, { state: "", kind: null, activity: "" });
        assert.deepEqual(alertsQuery(f, "c3"), { limit: 50, cursor: "c3" });
    });
});

describe("eventFilterOf and eventsQuery", () => {
    test("type and source", () => {
        const f = eventFilterOf(q("type=order.paid&source=shop"));
        assert.deepEqual(eventsQuery(f, ""), { event_type: "order.paid", source: "shop", limit: 50 });
    });
    test("no filter", () => {
        assert.deepEqual(eventsQuery(eventFilterOf(q("cursor=x")), "x"), { limit: 50, cursor: "x" });
    });
});

describe("streamQuery", () => {
    test("authentication off, first connection: no parameter", () => assert.equal(streamQuery(null, null), ""));
    test("a token", () => assert.equal(streamQuery("t0k", null), "token=t0k"));
    test("a reconnection resumes after the last change seen", () => assert.equal(streamQuery("t/k+", "42"), "token=t%2Fk%2B&since=42"));
    test("since without a token", () => assert.equal(streamQuery(null, "7"), "since=7"));
});
