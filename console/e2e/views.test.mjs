// Every view: axe-core finds no serious or critical violation, and a
// screenshot of each in both colour schemes and both sizes goes to
// ACP_ARTEFACTS.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { api, ARTEFACTS, axe, CONSOLE, launch, screenshots, signedIn, sink, uniq, until } from "./lib.mjs";

let browser;
let page;
let hooks;
const made = { activities: [], sources: [], subscriptions: [], calendars: [] };
let calendar;
let scheduled;
let run;
let eventId;
let source;
let subscription;
const violations = [];

before(async () => {
    hooks = await sink();
    browser = await launch();
    scheduled = await api("/v1/activities", {
        method: "POST",
        body: {
            name: uniq("e2e-views"),
            description: "Screenshots and axe",
            labels: { team: "e2e" },
            trigger: { type: "interval", every: "PT5S" },
            tasks: [{ task_type: "webhook", name: "notify", config: { url: hooks.url("/m") } }],
            flow: { concurrency: { limit: 1 } },
        },
    });
    made.activities.push(scheduled.id);
    const evType = uniq("e2e.views");
    const onEvent = await api("/v1/activities", {
        method: "POST",
        body: { name: uniq("e2e-views-event"), trigger: { type: "event", event_types: [evType] }, tasks: [{ task_type: "noop" }] },
    });
    made.activities.push(onEvent.id);
    const ing = await api("/v1/events", { method: "POST", body: { event_type: evType, source: "e2e", payload: { hello: "world" } } });
    eventId = ing.event_id;
    subscription = await api("/v1/subscriptions", { method: "POST", body: { url: hooks.url("/ok"), types: ["run.succeeded", "run.failed"], activity_id: scheduled.id } });
    made.subscriptions.push(subscription.id);
    source = await api("/v1/sources", {
        method: "POST",
        body: { name: uniq("e2e-nats"), kind: "nats", config: { url: "nats://127.0.0.1:1", stream: "E2E", durable: "e2e" }, enabled: false },
    });
    made.sources.push(source.id);
    const year = new Date().getUTCFullYear();
    calendar = await api("/v1/calendars", {
        method: "POST",
        body: {
            name: uniq("e2e-views-calendar"),
            timezone: "Europe/Berlin",
            holidays: [
                { date: `${year}-01-01`, name: "New Year's Day" },
                { date: `${year}-05-01`, name: "Labour Day" },
            ],
            working_days: [{ date: `${year}-06-13`, name: "Make-up Saturday" }],
            blackouts: [{ from: `${year}-08-01T18:00`, to: `${year}-08-03T06:00`, name: "Data-centre move" }],
            covered_until: `${year}-10-31`,
        },
    });
    made.calendars.push(calendar.id);
    // A succeeded and a failed run, then let the webhook succeed again.
    const runs = async (status) => (await api(`/v1/runs?activity_id=${scheduled.id}&status=${status}`)).items;
    await until(async () => (await runs("succeeded")).length >= 1, { what: "a succeeded run" });
    hooks.mode = "fail";
    await until(async () => (await runs("failed")).length >= 1, { what: "a failed run" });
    hooks.mode = "ok";
    run = (await runs("failed"))[0];
    page = await signedIn(browser);
});

after(async () => {
    for (const id of made.activities) await api(`/v1/activities/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    for (const id of made.subscriptions) await api(`/v1/subscriptions/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    for (const id of made.sources) await api(`/v1/sources/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    for (const id of made.calendars) await api(`/v1/calendars/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    await browser?.close();
    await hooks?.close();
});

async function settled(p) {
    await p.locator("h1").first().waitFor();
    await p.waitForFunction(() => ![...document.querySelectorAll('[role="status"]')].some((e) => /^Loading/.test(e.textContent ?? "")));
}

async function check(name, path, ready) {
    await page.goto(`${CONSOLE}${path}`);
    await settled(page);
    if (ready) await ready(page);
    const v = await axe(page);
    if (v.length) violations.push({ view: name, violations: v });
    await screenshots(page, name, async (p) => {
        await settled(p);
        if (ready) await ready(p);
    });
}

test("activities", () => check("activities", "/activities", (p) => p.locator(`tr[data-activity="${scheduled.id}"] svg.spark`).waitFor()));
test("new activity", () => check("activity-new", "/activities/new", (p) => p.locator(".preview ol.times li").first().waitFor()));
test("activity", () =>
    check(`activity`, `/activities/${scheduled.id}?zoom=hour`, async (p) => {
        await p.locator("canvas.timeline[data-drawn]").waitFor();
        await p.locator('.legend li[data-key="succeeded"] .n:not(:text("0"))').waitFor();
    }));
test("activity: times as a table", async () => {
    await page.goto(`${CONSOLE}/activities/${scheduled.id}?zoom=hour`);
    await page.locator("canvas.timeline[data-drawn]").waitFor();
    await page.getByText("The times as a table").click();
    await page.getByTestId("timeline-table").waitFor();
    const v = await axe(page);
    if (v.length) violations.push({ view: "activity-table", violations: v });
});
test("activity: backfill dry run dialog", async () => {
    await page.goto(`${CONSOLE}/activities/${scheduled.id}?zoom=hour`);
    await page.getByRole("button", { name: "Backfill" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Dry run" }).click();
    await page.getByTestId("backfill-plan").waitFor();
    const v = await axe(page);
    if (v.length) violations.push({ view: "backfill-dialog", violations: v });
    await screenshots(page, "activity-backfill");
});
test("activity: paused, the resume dialog", async () => {
    await api(`/v1/activities/${scheduled.id}/pause`, { method: "POST", body: { note: "screenshots of a paused activity" } });
    try {
        await page.goto(`${CONSOLE}/activities/${scheduled.id}?zoom=hour`);
        await page.getByTestId("paused-badge").waitFor();
        await page.getByRole("button", { name: "Resume" }).click();
        await page.getByRole("dialog").getByTestId("policy").waitFor();
        await settled(page);
        const v = await axe(page);
        if (v.length) violations.push({ view: "resume-dialog", violations: v });
        await screenshots(page, "activity-resume");
    } finally {
        await api(`/v1/activities/${scheduled.id}/resume`, { method: "POST", body: {} });
    }
});
test("edit activity", async () => {
    await check("activity-edit", `/activities/${scheduled.id}/edit`, (p) => p.locator(".preview ol.times li").first().waitFor());
    // Fields without a control of their own are kept, as JSON.
    assert.match(await page.locator('textarea[name="advanced"]').inputValue(), /"concurrency"/);
});
test("runs", () => check("runs", `/runs?activity=${scheduled.id}`, (p) => p.locator(`tr[data-run="${run.run_id}"]`).waitFor()));
test("run", () => check("run", `/runs/${run.run_id}`, (p) => p.getByTestId("run-error").waitFor()));
test("events", () => check("events", "/events", (p) => p.getByRole("link", { name: eventId.slice(0, 40) }).first().waitFor()));
test("event", () => check("event", `/events/${encodeURIComponent(eventId)}`, (p) => p.getByRole("heading", { name: "Dispatches" }).waitFor()));
test("sources", () => check("sources", "/sources", (p) => p.getByRole("link", { name: source.name }).waitFor()));
test("source", () => check("source", `/sources/${source.id}`, (p) => p.getByRole("heading", { name: "Rejected messages" }).waitFor()));
test("alerts", () => check("alerts", "/alerts"));
test("subscriptions", () => check("subscriptions", "/subscriptions", (p) => p.getByRole("link", { name: subscription.url }).first().waitFor()));
test("subscription", () => check("subscription", `/subscriptions/${subscription.id}`, (p) => p.getByRole("heading", { name: "Deliveries" }).waitFor()));
test("settings", () => check("settings", "/settings"));
test("calendars", () => check("calendars", "/calendars", (p) => p.getByRole("link", { name: calendar.name }).waitFor()));
test("calendar", () => check("calendar", `/calendars/${calendar.id}`, (p) => p.getByTestId("year-grid").waitFor()));
test("audit log", () => check("audit", "/audit", (p) => p.locator("tr[data-seq]").first().waitFor()));
test("keys", () => check("keys", "/keys", (p) => p.getByRole("button", { name: "Create key" }).waitFor()));
test("key prompt", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await context.newPage();
    await p.goto(`${CONSOLE}/activities`);
    await p.getByLabel("API key").waitFor();
    const v = await axe(p);
    if (v.length) violations.push({ view: "prompt", violations: v });
    await screenshots(p, "prompt");
    await context.close();
});

test("axe-core: no serious or critical violation on any view", () => {
    assert.deepEqual(violations, [], `violations (screenshots in ${ARTEFACTS})`);
});
