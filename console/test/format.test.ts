// The console's words for times: cron in words, zones, DST, durations.
// Node's ICU and Chromium's name zones alike ("GMT+1" for Berlin in en-CA).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Trigger } from "../src/api/client.js";
import {
    activityZone,
    businessDayWords,
    calendarWords,
    cronWords,
    duration,
    fmtTime,
    isoSeconds,
    isoToWall,
    isoWords,
    labelsText,
    policyOnResume,
    rateOf,
    relative,
    runDuration,
    triggerWords,
    wallToIso,
    zoneOf,
} from "../src/format.js";

describe("cronWords", () => {
    const cases: [string, string][] = [
        ["* * * * *", "every minute"],
        ["*/5 * * * *", "every 5 minutes"],
        ["15 * * * *", "every hour at :15"],
        ["0 */6 * * *", "every 6 hours at :00"],
        ["30 2 * * *", "02:30 every day"],
        ["0 9,17 * * *", "09:00, 17:00 every day"],
        ["0 9 * * 1-5", "09:00 on weekdays"],
        ["*/15 * * * 1-5", "every 15 minutes on weekdays"],
        ["0 9 * * 0,6", "09:00 on Sunday, Saturday"],
        ["0 9 * * 7", "09:00 on Sunday"],
        ["0 0 1 * *", "00:00 on day 1 of every month"],
        ["0 0 1 1,7 *", "00:00 on day 1 of January, July"],
        ["  5   4 * * *  ", "04:05 every day"],
        // What does not read naturally stays cron.
        ["*/5 9-17 * * *", "cron */5 9-17 * * *"],
        ["0 0 L * *", "cron 0 0 L * *"],
        ["0 0 1 * 1", "cron 0 0 1 * 1"],
        ["0 0 * *", "cron 0 0 * *"],
        // Business-day offsets.
        ["0 9 BD3 * *", "09:00 on the 3rd business day"],
        ["0 9 BD1 * *", "09:00 on the 1st business day"],
        ["0 9 BD22 * *", "09:00 on the 22nd business day"],
        ["0 9 BD11 * *", "09:00 on the 11th business day"],
        ["30 17 BDL * *", "17:30 on the last business day"],
        ["30 17 bdl * *", "17:30 on the last business day"],
        ["0 9 BDL-1 * *", "09:00 on the business day before the last"],
        ["0 9 BDL-2 1,7 *", "09:00 on the 2nd business day before the last of January, July"],
        ["0 9 BD3,15 * *", "cron 0 9 BD3,15 * *"],
        ["0 9 BD3 * 1-5", "cron 0 9 BD3 * 1-5"],
    ];
    for (const [expr, words] of cases) test(expr, () => assert.equal(cronWords(expr), words));
});

describe("businessDayWords", () => {
    const cases: [string, string | null][] = [
        ["BD2", "the 2nd business day"],
        ["BD13", "the 13th business day"],
        ["BD21", "the 21st business day"],
        ["BDL", "the last business day"],
        ["BDL-1", "the business day before the last"],
        ["BDL-5", "the 5th business day before the last"],
        ["15", null],
        ["L", null],
        ["BD", null],
        ["BD3,15", null],
    ];
    for (const [field, words] of cases) test(field, () => assert.equal(businessDayWords(field), words));
});

describe("calendarWords", () => {
    const id = "0b6f7c2e-1111-4222-8333-944445555666";
    test("business days with a roll", () => assert.equal(calendarWords({ id, mode: "business_days", roll: "next" }, "us-nyse"), "us-nyse (business days, roll next)"));
    test("the defaults", () => assert.equal(calendarWords({ id }, "us-nyse"), "us-nyse (business days)"));
    test("exclude, pausing past its coverage", () =>
        assert.equal(calendarWords({ id, mode: "exclude", beyond_coverage: "pause" }, "ops"), "ops (non-business days excluded, beyond coverage: pause)"));
    test("an offset names no roll", () => assert.equal(calendarWords({ id, roll: "previous" }, "us-nyse", true), "us-nyse (business days)"));
    test("without its name", () => assert.equal(calendarWords({ id, mode: "exclude" }), "calendar 0b6f7c2e (non-business days excluded)"));
});

describe("triggerWords", () => {
    const cases: [string, Trigger, string][] = [
        [
            "cron with its zone, DST policy and grace",
            { type: "cron", cron: "30 2 * * *", timezone: "Europe/Berlin", dst: { repeated: "both", skipped: "skip" }, misfire_policy: "skip", misfire_grace: "PT5M" },
            "02:30 every day, Europe/Berlin; DST: both/skip; misfire: skip (grace 5 min)",
        ],
        ["cron with the defaults", { type: "cron", cron: "0 9 * * 1-5" }, "09:00 on weekdays, UTC; DST: first/shift; misfire: skip (grace 1 min)"],
        ["interval catching up", { type: "interval", every: "PT1H30M", misfire_policy: "catchup", catchup_limit: 3 }, "every 1 h 30 min; misfire: catchup (limit 3)"],
        ["interval compressing", { type: "interval", every: "P1D", misfire_policy: "compress" }, "every 1 d; misfire: compress"],
        ["event", { type: "event", event_types: ["order.paid", "order.refunded"] }, "on event order.paid, order.refunded"],
    ];
    for (const [name, trigger, words] of cases) test(name, () => assert.equal(triggerWords(trigger), words));
    const id = "0b6f7c2e-1111-4222-8333-944445555666";
    test("a business-day offset on its calendar", () =>
        assert.equal(
            triggerWords({ type: "cron", cron: "0 9 BD3 * *", timezone: "America/New_York", calendar: { id, mode: "business_days", roll: "next" } }, "us-nyse"),
            "09:00 on the 3rd business day, America/New_York; DST: first/shift; misfire: skip (grace 1 min) · us-nyse (business days)",
        ));
    test("a cron rolled on its calendar", () =>
        assert.equal(
            triggerWords({ type: "cron", cron: "0 9 * * 5", timezone: "America/New_York", calendar: { id, roll: "next" } }, "us-nyse"),
            "09:00 on Friday, America/New_York; DST: first/shift; misfire: skip (grace 1 min) · us-nyse (business days, roll next)",
        ));
});

test("policyOnResume says what each misfire policy does with the paused times", () => {
    assert.match(policyOnResume({ type: "cron", cron: "* * * * *" }), /^Misfire policy skip: the times missed while paused do not run/);
    assert.match(policyOnResume({ type: "interval", every: "PT1M", misfire_policy: "catchup", catchup_limit: 4 }), /the most recent 4 missed times run/);
    assert.match(policyOnResume({ type: "interval", every: "PT1M", misfire_policy: "catchup" }), /the most recent 10 missed times run/);
    assert.match(policyOnResume({ type: "cron", cron: "* * * * *", misfire_policy: "compress" }), /^Misfire policy compress: one run for the latest missed time/);
});

describe("zones", () => {
    test("the activity's zone is its cron zone, else UTC", () => {
        assert.equal(activityZone({ trigger: { type: "cron", cron: "* * * * *", timezone: "Asia/Kolkata" } }), "Asia/Kolkata");
        assert.equal(activityZone({ trigger: { type: "cron", cron: "* * * * *" } }), "UTC");
        assert.equal(activityZone({ trigger: { type: "interval", every: "PT1M" } }), "UTC");
    });
    test("the zone shown follows the switch", () => {
        assert.equal(zoneOf("utc", "Europe/Berlin"), "UTC");
        assert.equal(zoneOf("activity", "Europe/Berlin"), "Europe/Berlin");
        assert.equal(zoneOf("activity", null), "UTC");
        assert.equal(zoneOf("local", "Europe/Berlin"), Intl.DateTimeFormat().resolvedOptions().timeZone);
    });
});

describe("fmtTime", () => {
    const cases: [string, string, "full" | "short" | "time" | "day", string][] = [
        ["2026-03-29T00:30:00Z", "Europe/Berlin", "full", "2026-03-29 01:30:00 GMT+1"],
        // An hour later the clocks have moved on by two: summer time.
        ["2026-03-29T01:30:00Z", "Europe/Berlin", "full", "2026-03-29 03:30:00 GMT+2"],
        ["2026-03-08T07:30:00Z", "America/New_York", "full", "2026-03-08 03:30:00 EDT"],
        ["2026-12-31T23:59:59Z", "UTC", "full", "2026-12-31 23:59:59 UTC"],
        ["2026-12-31T23:30:00Z", "Asia/Kolkata", "short", "2027-01-01 05:00"],
        ["2026-07-01T10:00:05Z", "Europe/Berlin", "time", "12:00:05"],
        ["2026-07-01T22:30:00Z", "Europe/Berlin", "day", "2026-07-02"],
        ["2026-07-01T10:00:00Z", "Not/AZone", "short", "2026-07-01 10:00"],
    ];
    for (const [iso, zone, kind, text] of cases) test(`${iso} in ${zone} (${kind})`, () => assert.equal(fmtTime(iso, zone, kind), text));
    test("no time and a broken one", () => {
        assert.equal(fmtTime(null, "UTC"), "—");
        assert.equal(fmtTime("yesterday", "UTC"), "yesterday");
    });
});

describe("wall times across DST", () => {
    const cases: [string, string, string, string][] = [
        ["summer", "2026-07-01T12:00", "Europe/Berlin", "2026-07-01T10:00:00.000Z"],
        ["winter", "2026-01-15T08:15", "Europe/Berlin", "2026-01-15T07:15:00.000Z"],
        ["with seconds", "2026-01-15T08:15:30", "UTC", "2026-01-15T08:15:30.000Z"],
        // 02:30 does not exist on 29 March in Berlin: it moves on by the gap, to 03:30 summer time;
        // likewise west of Greenwich (03:30 EDT), not back to 01:30.
        ["a time in the spring gap", "2026-03-29T02:30", "Europe/Berlin", "2026-03-29T01:30:00.000Z"],
        ["a time in New York's gap", "2026-03-08T02:30", "America/New_York", "2026-03-08T07:30:00.000Z"],
        // 02:30 happens twice on 25 October: the first time, still in summer time.
        ["a repeated time", "2026-10-25T02:30", "Europe/Berlin", "2026-10-25T00:30:00.000Z"],
        ["a repeated time in New York", "2026-11-01T01:30", "America/New_York", "2026-11-01T05:30:00.000Z"],
        ["a zone half an hour off", "2026-07-01T12:00", "Asia/Kolkata", "2026-07-01T06:30:00.000Z"],
    ];
    for (const [name, wall, zone, iso] of cases) test(`wallToIso: ${name}`, () => assert.equal(wallToIso(wall, zone), iso));
    test("wallToIso refuses what is not a wall time", () => {
        assert.equal(wallToIso("", "UTC"), null);
        assert.equal(wallToIso("2026-07-01 12:00", "UTC"), null);
    });
    test("isoToWall: each instant of the autumn hour shows its own wall time", () => {
        assert.equal(isoToWall("2026-10-25T00:30:00Z", "Europe/Berlin"), "2026-10-25T02:30");
        assert.equal(isoToWall("2026-10-25T01:30:00Z", "Europe/Berlin"), "2026-10-25T02:30");
        assert.equal(isoToWall("2026-03-29T01:30:00Z", "Europe/Berlin"), "2026-03-29T03:30");
        assert.equal(isoToWall("2026-07-01T06:30:00Z", "Asia/Kolkata"), "2026-07-01T12:00");
    });
    test("a wall time outside DST changes survives the round trip", () => {
        for (const wall of ["2026-01-01T00:00", "2026-06-15T23:59", "2026-11-01T12:34"]) {
            assert.equal(isoToWall(wallToIso(wall, "America/New_York")!, "America/New_York"), wall);
        }
    });
});

describe("durations", () => {
    const cases: [number | null | undefined, string][] = [
        [null, "—"],
        [undefined, "—"],
        [Number.NaN, "—"],
        [0, "0 ms"],
        [250.4, "250 ms"],
        [1500, "1.50 s"],
        [12_340, "12.3 s"],
        [61_000, "1 min 1 s"],
        [3_599_000, "59 min 59 s"],
        [3_720_000, "1 h 2 min"],
        [90_000_000, "25 h 0 min"],
    ];
    for (const [ms, text] of cases) test(`duration(${ms})`, () => assert.equal(duration(ms), text));

    test("runDuration: finished, still running, not started", () => {
        assert.equal(runDuration({ started_at: "2026-01-01T00:00:00Z", finished_at: "2026-01-01T00:00:02Z" }), "2.00 s");
        assert.match(runDuration({ started_at: new Date(Date.now() - 5 * 60_000).toISOString() }), /^5 min \d+ s so far$/);
        assert.equal(runDuration({ started_at: null }), "—");
    });

    const iso: [string | null, number | null, string][] = [
        ["PT30S", 30, "30 s"],
        ["PT1H30M", 5400, "1 h 30 min"],
        ["P1D", 86_400, "1 d"],
        ["P1DT2H", 93_600, "1 d 2 h"],
        ["P1W", 604_800, "7 d"],
        ["PT0S", 0, "0 s"],
        ["PT1.5S", 1.5, "1.5 s"],
        ["1 hour", null, "1 hour"],
        [null, null, ""],
    ];
    for (const [d, seconds, words] of iso) {
        test(`ISO-8601 ${d}`, () => {
            assert.equal(isoSeconds(d), seconds);
            assert.equal(isoWords(d), words);
        });
    }

    const now = Date.parse("2026-06-01T12:00:00Z");
    const rel: [string, string][] = [
        ["2026-06-01T11:59:30Z", "30 s ago"],
        ["2026-06-01T12:03:00Z", "in 3 min"],
        ["2026-06-01T09:00:00Z", "3 h ago"],
        ["2026-06-02T23:00:00Z", "in 35 h"],
        ["2026-05-25T12:00:00Z", "7 d ago"],
    ];
    for (const [iso, text] of rel) test(`relative ${iso}`, () => assert.equal(relative(iso, now), text));
});

test("rateOf estimates nominal times per second", () => {
    assert.equal(rateOf({ type: "cron", cron: "* * * * *" }), 1 / 60);
    assert.equal(rateOf({ type: "cron", cron: "0 * * * *" }), 24 / 86_400);
    assert.equal(rateOf({ type: "cron", cron: "*/15 9-17 * * 1-5" }), (4 * 9) / 86_400);
    assert.equal(rateOf({ type: "cron", cron: "0,30 8,20 * * *" }), 4 / 86_400);
    assert.equal(rateOf({ type: "interval", every: "PT30S" }), 1 / 30);
    assert.equal(rateOf({ type: "event", event_types: ["x"] }), 1 / 60);
});

test("labelsText", () => {
    assert.deepEqual(labelsText({ team: "support", tier: 1 }), ["team=support", "tier=1"]);
    assert.deepEqual(labelsText(null), []);
});
