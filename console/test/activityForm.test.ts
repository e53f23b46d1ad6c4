// The definition form: what it shows of a definition, and the request it makes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Activity } from "../src/api/client.js";
import { EMPTY, fromActivity, newTask, requestOf, triggerOf, type FormState } from "../src/views/activityForm/model.js";

const form = (changes: Partial<FormState>): FormState => ({ ...EMPTY, name: "nightly", ...changes });

// The fields of a definition the form reads; the rest of the answer plays no part.
const nightly = {
    id: "a1",
    name: "nightly export",
    description: "to the warehouse",
    labels: { team: "data", tier: "gold" },
    enabled: false,
    trigger: {
        type: "cron",
        cron: "0 3 * * *",
        timezone: "Europe/Berlin",
        dst: { repeated: "last" },
        misfire_policy: "catchup",
        misfire_grace: "PT5M",
        catchup_limit: 3,
        start_at: "2026-01-01T00:00:00Z",
        end_at: null,
        jitter: "PT30S",
    },
    tasks: [
        { task_type: "webhook", name: "export", config: { url: "https://example.test/hook", method: "POST" } },
        { task_type: "noop", name: null, config: {} },
    ],
    flow: { concurrency: { limit: 1 } },
    run_timeout: "PT1H",
    dedupe_key_strategy: "nominal_time",
} as unknown as Activity;

describe("requestOf a new activity", () => {
    test("the defaults make a daily cron with one no-op task", () => {
        assert.deepEqual(requestOf(form({ timezone: "UTC" })), {
            name: "nightly",
            description: null,
            labels: {},
            enabled: true,
            trigger: { type: "cron", cron: "30 2 * * *", timezone: "UTC", dst: null, misfire_policy: "skip", misfire_grace: "PT60S", catchup_limit: 10 },
            tasks: [{ task_type: "noop", name: null, config: {} }],
        });
    });
    test("labels are key=value, split on commas and lines, trimmed", () => {
        assert.deepEqual(requestOf(form({ labels: "team=ops, tier = gold\nquery=a=b,," })).labels, { team: "ops", tier: "gold", query: "a=b" });
    });
    for (const bad of ["ops", "=ops"]) {
        test(`the label "${bad}" is refused, named`, () => {
            assert.throws(() => requestOf(form({ labels: `team=x, ${bad}` })), { message: `Label "${bad}" is not key=value.` });
        });
    }
    test("a webhook's URL goes into its configuration", () => {
        const tasks = [{ ...newTask(), task_type: "webhook", name: "call", url: "https://example.test/x", config: '{"timeout": "PT10S"}' }];
        assert.deepEqual(requestOf(form({ tasks })).tasks, [{ task_type: "webhook", name: "call", config: { timeout: "PT10S", url: "https://example.test/x" } }]);
    });
    test("a task's configuration that is not JSON is refused, naming the task", () => {
        const tasks = [newTask(), { ...newTask(), config: "{timeout: 1}" }];
        assert.throws(() => requestOf(form({ tasks })), { message: "Task 2: the configuration is not JSON." });
    });
    test("an empty configuration is an empty object", () => {
        assert.deepEqual(requestOf(form({ tasks: [{ ...newTask(), config: "  " }] })).tasks, [{ task_type: "noop", name: null, config: {} }]);
    });
});

describe("requestOf: flow control, alerts, notifications (JSON)", () => {
    test("its fields join the request", () => {
        const req = requestOf(form({ advanced: '{"flow": {"concurrency": {"limit": 2}}, "run_timeout": "PT10M"}' }));
        assert.deepEqual(req.flow, { concurrency: { limit: 2 } });
        assert.equal(req.run_timeout, "PT10M");
    });
    const cases: [string, string, string][] = [
        ["not JSON", "{flow:", "Flow control, alerts and notifications: not JSON."],
        ["an array", "[]", "Flow control, alerts and notifications: a JSON object, please."],
        ["null", "null", "Flow control, alerts and notifications: a JSON object, please."],
        ["another field", '{"name": "x"}', 'Flow control, alerts and notifications: "name" is not one of flow, alerts, notify, run_timeout.'],
    ];
    for (const [name, advanced, message] of cases) {
        test(`${name} is refused`, () => assert.throws(() => requestOf(form({ advanced })), { message }));
    }
    test("empty is nothing", () => {
        assert.equal("flow" in requestOf(form({ advanced: "" })), false);
    });
});

describe("triggerOf", () => {
    test("event types split on commas and spaces", () => {
        assert.deepEqual(triggerOf(form({ kind: "event", eventTypes: "order.paid, order.refunded  user.created," })), {
            type: "event",
            event_types: ["order.paid", "order.refunded", "user.created"],
        });
    });
    test("an interval, no grace and no catch-up limit", () => {
        assert.deepEqual(triggerOf(form({ kind: "interval", every: "PT30S", policy: "compress", grace: "", catchupLimit: "" })), {
            type: "interval",
            every: "PT30S",
            misfire_policy: "compress",
            misfire_grace: null,
            catchup_limit: null,
        });
    });
    test("a cron's DST choices: only those made", () => {
        const t = triggerOf(form({ skipped: "skip", timezone: "" }));
        assert.equal(t.type === "cron" && t.timezone, "UTC");
        assert.deepEqual(t.type === "cron" && t.dst, { skipped: "skip" });
    });
    test("start_at, end_at and jitter (no control) stay as they were", () => {
        const t = triggerOf(fromActivity(nightly), nightly.trigger);
        assert.deepEqual(t, { ...nightly.trigger });
    });
    test("a business calendar: a roll only for business days", () => {
        const cases: [Partial<FormState>, unknown][] = [
            [{}, undefined],
            [{ calendarId: "c1" }, { id: "c1", mode: "business_days", roll: "skip", beyond_coverage: "run" }],
            [{ calendarId: "c1", roll: "next", beyond: "pause" }, { id: "c1", mode: "business_days", roll: "next", beyond_coverage: "pause" }],
            [{ calendarId: "c1", calendarMode: "exclude", roll: "next" }, { id: "c1", mode: "exclude", roll: "skip", beyond_coverage: "run" }],
            [{ kind: "interval", calendarId: "c1", roll: "previous" }, { id: "c1", mode: "business_days", roll: "previous", beyond_coverage: "run" }],
        ];
        for (const [changes, want] of cases) {
            const t = triggerOf(form(changes));
            assert.deepEqual(t.type !== "event" ? t.calendar : "event", want, JSON.stringify(changes));
        }
    });
    test("a calendar is shown as the trigger names it", () => {
        const calendar = { id: "c9", mode: "business_days", roll: "previous", beyond_coverage: "skip" };
        const withCalendar = { ...nightly, trigger: { ...nightly.trigger, calendar } } as unknown as Activity;
        const f = fromActivity(withCalendar);
        assert.deepEqual([f.calendarId, f.calendarMode, f.roll, f.beyond], ["c9", "business_days", "previous", "skip"]);
        assert.deepEqual(triggerOf(f, withCalendar.trigger), withCalendar.trigger);
    });
    test("but not when the kind changes", () => {
        const t = triggerOf({ ...fromActivity(nightly), kind: "interval" }, nightly.trigger);
        assert.equal("start_at" in t, false);
        assert.equal("jitter" in t, false);
    });
});

describe("fromActivity", () => {
    const f = fromActivity(nightly);
    test("shows the definition", () => {
        assert.equal(f.name, "nightly export");
        assert.equal(f.labels, "team=data, tier=gold");
        assert.equal(f.enabled, false);
        assert.equal(f.kind, "cron");
        assert.equal(f.timezone, "Europe/Berlin");
        assert.equal(f.repeated, "last");
        assert.equal(f.skipped, "");
        assert.equal(f.policy, "catchup");
        assert.equal(f.catchupLimit, "3");
        assert.deepEqual(JSON.parse(f.advanced), { flow: { concurrency: { limit: 1 } }, run_timeout: "PT1H" });
    });
    test("a webhook's URL has a field of its own", () => {
        assert.equal(f.tasks[0]?.url, "https://example.test/hook");
        assert.deepEqual(JSON.parse(f.tasks[0]?.config ?? ""), { method: "POST" });
        assert.equal(f.tasks[1]?.url, "");
    });
    test("saving unchanged sends the definition back as it was", () => {
        const req = requestOf(f, nightly);
        assert.equal(req.name, nightly.name);
        assert.equal(req.description, nightly.description);
        assert.deepEqual(req.labels, nightly.labels);
        assert.equal(req.enabled, false);
        assert.deepEqual(req.trigger, nightly.trigger);
        assert.deepEqual(req.tasks, nightly.tasks);
        assert.deepEqual(req.flow, nightly.flow);
        assert.equal(req.run_timeout, "PT1H");
        assert.equal(req.dedupe_key_strategy, "nominal_time");
    });
});
