// The main story, from real runs: create an activity through the console,
// find it in the list, watch its timeline fill with a succeeded, a failed and
// a skipped time (each in its legend colour), cancel a running run, retry a
// failed one, bulk-retry a filter, pause with a note, resume, and backfill the
// paused span from its dry run, the new runs appearing without a reload.
import assert from "node:assert/strict";
import { after, before, test as nodeTest } from "node:test";
import { ADMIN, api, CONSOLE, launch, sink, uniq, until } from "./lib.mjs";

// The steps build on one another: after a failure, the rest are skipped.
let broken = false;
function test(name, fn) {
    nodeTest(name, async (t) => {
        if (broken) return t.skip("an earlier step failed");
        try {
            await fn(t);
        } catch (e) {
            broken = true;
            throw e;
        }
    });
}

let browser;
let page;
let hooks;
const name = uniq("e2e-story");
let id;

before(async () => {
    hooks = await sink();
    browser = await launch();
    // No token in storage: the console must ask for one.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.errors = [];
    page.on("pageerror", (e) => page.errors.push(String(e)));
});

after(async () => {
    if (id) await api(`/v1/activities/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    await browser?.close();
    await hooks?.close();
});

const legendCount = async (key) => Number(await page.locator(`.legend li[data-key="${key}"] .n`).innerText());

/** Walks the timeline by keyboard (from "now" back in time) to a cell of `key`; its tooltip. */
async function cellOf(key) {
    const canvas = page.locator("canvas.timeline");
    // A fresh focus starts at "now".
    await canvas.evaluate((c) => c.blur());
    await canvas.focus();
    for (let i = 0; i < 400; i++) {
        const tip = page.getByTestId("timeline-tip");
        if ((await tip.count()) && (await tip.getAttribute("data-key")) === key) {
            return { x: Number(await tip.getAttribute("data-x")), y: Number(await tip.getAttribute("data-y")), colour: await tip.getAttribute("data-colour"), text: await tip.innerText() };
        }
        await page.keyboard.press("ArrowLeft");
    }
    throw new Error(`no ${key} cell reached by keyboard`);
}

/** The canvas pixel's colour at (x, y) CSS pixels, as #rrggbb. */
async function pixel(x, y) {
    return page.locator("canvas.timeline").evaluate(
        (c, [x, y]) => {
            const dpr = c.width / c.getBoundingClientRect().width;
            const d = c.getContext("2d").getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data;
            return `#${[d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, "0")).join("")}`;
        },
        [x, y],
    );
}

async function assertCell(key, words) {
    const cell = await cellOf(key);
    const legend = page.locator(`.legend li[data-key="${key}"]`);
    assert.equal(await legend.getAttribute("data-colour"), cell.colour, `${key}: the cell's colour is its legend entry's`);
    assert.match(await legend.innerText(), words);
    assert.match(cell.text, words);
    assert.equal(await pixel(cell.x, cell.y), cell.colour.toLowerCase(), `${key}: the canvas draws the legend colour`);
}

test("sign in through the key prompt", async () => {
    await page.goto(`${CONSOLE}/activities`);
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That key was refused.").waitFor();
    await page.getByLabel("API key").fill(ADMIN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("acp.console.token")), ADMIN);
    assert.ok(!page.url().includes(ADMIN), "the key is never in the URL");
    assert.equal((await page.context().cookies()).length, 0, "no cookie");
    await page.locator('.live[data-state="live"]').waitFor();
});

test("create an activity through the console, with the next times previewed", async () => {
    await page.getByRole("link", { name: "New activity" }).click();
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel("Labels (key=value, comma-separated)").fill("suite=e2e");
    await page.getByLabel("Kind").selectOption("interval");
    await page.getByLabel("Every (ISO-8601 duration, e.g. PT30S, PT1H)").fill("PT5S");
    // The preview answers while typing.
    await page.locator(".preview ol.times li").first().waitFor();
    assert.ok((await page.locator(".preview ol.times li").count()) >= 5);
    await page.getByLabel("Task type").fill("webhook");
    await page.getByLabel("Webhook URL").fill(hooks.url("/m"));
    await page.getByRole("button", { name: "Create activity" }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
    id = page.url().split("/activities/")[1].split("?")[0];
    assert.match(id, /^[0-9a-f-]{36}$/);
});

test("the new activity is in the list, found by text and label, linked to its page", async () => {
    await page.goto(`${CONSOLE}/activities?q=${encodeURIComponent(name)}`);
    const row = page.locator(`tr[data-activity="${id}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /every 5 s/);
    // A real link: it opens in a new tab as well.
    assert.equal(await row.getByRole("link", { name }).getAttribute("href"), `/console/activities/${id}`);
    await page.goto(`${CONSOLE}/activities?label=suite%3De2e`);
    await row.waitFor();
    // The zone switch is kept in the URL; the back button restores the view.
    await page.getByLabel("Times in").selectOption("local");
    await page.waitForURL(/tz=local/);
    assert.match(page.url(), /label=suite%3De2e/);
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes("tz="));
    await row.waitFor();
    await row.getByRole("link", { name }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    await page.goForward();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
});

test("edit the definition, the next times previewed while typing", async () => {
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("heading", { name: `Edit ${name}` }).waitFor();
    const every = page.getByLabel(/^Every/);
    assert.equal(await every.inputValue(), "PT5S");
    await every.fill("PT7S");
    await page.getByTestId("trigger-words").getByText(/every 7 s/).waitFor();
    // The service's preview answers for the typed trigger: times 7 s apart.
    const gap = () =>
        page.locator(".preview ol.times time").evaluateAll((ts) => {
            const t = ts.map((x) => new Date(x.getAttribute("datetime")).getTime());
            return t.length > 1 ? t[1] - t[0] : null;
        });
    await until(async () => (await gap()) === 7000, { what: "the preview of PT7S", timeout: 10_000, interval: 100 });
    await page.getByLabel(/^Every/).fill("PT5S");
    await page.getByTestId("trigger-words").getByText(/every 5 s/).waitFor();
    await page.getByLabel("Description").fill("edited by e2e");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
    await page.getByText("edited by e2e", { exact: true }).waitFor();
    assert.match(await page.locator("dl.facts").innerText(), /version 2/);
});

test("the timeline shows a succeeded, a failed and a skipped time, each in its legend colour, live", async () => {
    await page.goto(`${CONSOLE}/activities/${id}?zoom=hour`);
    await page.locator("canvas.timeline[data-drawn]").waitFor();
    await until(async () => (await legendCount("succeeded")) >= 1, { what: "a succeeded time", timeout: 60_000 });
    hooks.mode = "fail";
    await until(async () => (await legendCount("failed")) >= 1, { what: "a failed time", timeout: 60_000 });
    hooks.mode = "hang";
    await until(async () => (await legendCount("running")) >= 1 && (await legendCount("overlap_skipped")) >= 1, { what: "a running and an overlap-skipped time", timeout: 60_000 });
    await assertCell("succeeded", /succeeded/);
    await assertCell("failed", /failed/);
    await assertCell("overlap_skipped", /skipped: overlap/);
    // Every status and reason of the API is in the legend.
    for (const k of ["queued", "running", "succeeded", "failed", "cancelled", "timed_out", "skipped", "misfire", "catchup_limit", "compressed", "concurrency_limit", "rate_limited", "debounced", "dst_policy", "dst_gap", "dst_repeat", "paused", "before_start", "not_yet_fired", "temporal_unavailable", "overlap_skipped", "holiday", "weekend", "blackout", "rolled", "beyond_coverage"]) {
        assert.equal(await page.locator(`.legend li[data-key="${k}"]`).count(), 1, `legend names ${k}`);
    }
});

test("cancel a running run from its page", async () => {
    await cellOf("running");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: /^Run / }).waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByRole("dialog").getByLabel("Reason (optional)").fill("e2e cancels");
    await page.getByRole("dialog").getByRole("button", { name: "Cancel run" }).click();
    // The sink answers again only once the cancellation is accepted: before
    // it, the hanging attempt's retry could succeed first on a slow machine.
    await page.getByText(/^Cancellation /).waitFor();
    hooks.mode = "ok";
    // The stream brings the outcome: no reload.
    await page.locator('h1 .badge[data-status="cancelled"]').waitFor({ timeout: 60_000 });
    await page.locator("dd", { hasText: "e2e cancels" }).waitFor();
});

test("retry a failed run", async () => {
    await page.goto(`${CONSOLE}/runs?activity=${id}&status=failed`);
    const row = page.locator('tr[data-status="failed"]').first();
    await row.waitFor();
    await row.getByRole("link").first().click();
    await page.getByRole("button", { name: "Retry run" }).click();
    await page.getByText(/Retry started: attempt 2/).waitFor();
    await page.locator('h1 .badge[data-status="succeeded"]').waitFor({ timeout: 60_000 });
    await page.getByRole("heading", { name: "Attempts" }).waitFor();
});

test("bulk-retry a filter, the count shown before confirming", async () => {
    hooks.mode = "fail";
    await until(async () => (await api(`/v1/runs?activity_id=${id}&status=failed&limit=200`)).items.length >= 2, { what: "two failed runs", timeout: 60_000 });
    hooks.mode = "ok";
    await page.goto(`${CONSOLE}/runs?activity=${id}&status=failed`);
    await page.locator('tr[data-status="failed"]').first().waitFor();
    await page.getByRole("button", { name: "Retry matching…" }).click();
    const count = page.getByTestId("bulk-count");
    await count.waitFor();
    const n = Number((await count.locator("strong").innerText()).replace("+", ""));
    const failedNow = (await api(`/v1/runs?activity_id=${id}&status=failed&limit=200`)).items.length;
    assert.ok(n >= 2 && n <= failedNow, `the dialog counts ${n} of ${failedNow} failed runs`);
    assert.ok((await page.getByTestId("bulk-sample").locator("li a").count()) >= 2, "the matched runs are named");
    await page.getByRole("button", { name: `Retry ${n} runs` }).click();
    await page.getByTestId("bulk-result").waitFor();
    assert.match(await page.getByTestId("bulk-result").innerText(), /retried/);
    await page.getByRole("dialog").getByRole("button", { name: "Close", exact: true }).click();
    // The list follows the stream: the retried runs leave the "failed" filter.
    await until(async () => (await page.locator('tr[data-status="failed"]').count()) < n, { what: "retried runs to leave the failed list", timeout: 60_000 });
});

let pausedAt;
let resumedAt;

test("pause with a note, resume with the policy shown", async () => {
    await page.goto(`${CONSOLE}/activities/${id}?zoom=hour`);
    // The retried times (attempt 2) are noted under the timeline.
    await page.getByTestId("window-notes").locator('[data-note="retried"]').waitFor();
    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByRole("dialog").getByLabel("Note (why, until when)").fill("maintenance by e2e");
    pausedAt = Date.now();
    await page.getByRole("dialog").getByRole("button", { name: "Pause" }).click();
    await page.getByTestId("paused-badge").waitFor();
    assert.match(await page.getByTestId("paused-badge").innerText(), /maintenance by e2e/);
    // Fires while paused become "paused" times: wait for two that are past (the API says so), then see them.
    const pastPaused = async () => {
        const now = new Date();
        const from = new Date(pausedAt - 60_000).toISOString();
        const tl = await api(`/v1/activities/${id}/timeline?from=${from}&to=${now.toISOString()}`);
        return tl.items.filter((e) => e.reason === "paused").length;
    };
    await until(async () => (await pastPaused()) >= 2, { what: "two past paused times", timeout: 60_000 });
    await until(async () => (await legendCount("paused")) >= 2, { what: "paused times on the timeline", timeout: 30_000 });
    await page.getByRole("button", { name: "Resume" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByTestId("policy").waitFor();
    assert.match(await dialog.getByTestId("policy").innerText(), /skip/);
    await dialog.getByText(/maintenance by e2e/).waitFor();
    // What the policy will do with the times missed while paused: the service's dry run, or the estimate from the timeline.
    const preview = dialog.locator('[data-testid="missed"], [data-testid="resume-estimate"]');
    await preview.waitFor();
    assert.match(await preview.innerText(), /\d+ missed times/);
    await dialog.getByRole("button", { name: "Resume" }).click();
    await dialog.getByText("Resumed.").waitFor();
    resumedAt = Date.now();
    await dialog.getByRole("button", { name: "Close", exact: true }).click();
    await page.getByTestId("paused-badge").waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Pause" }).waitFor();
    // Who did it: the activity's changes name the console's key, newest first.
    const history = page.getByTestId("activity-history").locator("li");
    await history.filter({ hasText: /^resume by console-admin/ }).first().waitFor();
    assert.match(await history.first().innerText(), /^resume by console-admin/);
    await history.filter({ hasText: /^pause by console-admin/ }).first().waitFor();
    // The audit log has the pause, with its note in the change.
    await page.getByRole("link", { name: "All changes of this activity" }).click();
    const pauseRow = page.locator('tr[data-operation="pause_activity"]').first();
    await pauseRow.waitFor();
    await pauseRow.getByText("Change").click();
    await pauseRow.getByText(/maintenance by e2e/).waitFor();
    // Back where the next step starts: the activity's timeline.
    await page.goBack();
    await page.locator("canvas.timeline[data-drawn]").waitFor();
});

test("backfill the paused span: the dry run lists every time, confirming runs them, the runs appear live", async () => {
    const pausedBefore = await legendCount("paused");
    assert.ok(pausedBefore >= 2);
    await page.getByRole("button", { name: "Backfill" }).click();
    const dialog = page.getByRole("dialog");
    const wall = (t) => new Date(t).toISOString().slice(0, 16);
    // The activity's zone is UTC (an interval): wall times are UTC. Whole minutes around the pause.
    await dialog.getByLabel("Start").fill(wall(pausedAt - 60_000));
    await dialog.getByLabel("End (exclusive)").fill(wall(resumedAt + 60_000));
    await dialog.getByRole("button", { name: "Dry run" }).click();
    const plan = dialog.getByTestId("backfill-plan");
    await plan.waitFor();
    const rows = plan.locator("tbody tr");
    assert.ok((await rows.count()) >= 12, "every time of the range is listed");
    const toRun = await plan.locator('tbody tr[data-action="backfilled"]').count();
    assert.ok(toRun >= 2, `the paused times are to be backfilled (${toRun})`);
    assert.ok((await plan.locator('tbody tr[data-action="duplicate"]').count()) >= 1, "times that ran are duplicates");
    await dialog.getByRole("button", { name: "Confirm backfill" }).click();
    await dialog.getByText(/^Done:/).waitFor();
    await dialog.getByRole("button", { name: "Close", exact: true }).click();
    // Without a reload, the backfilled times get runs: fewer "paused" cells.
    await until(async () => (await legendCount("paused")) <= pausedBefore - 2, { what: "backfilled runs on the timeline", timeout: 60_000 });
    assert.deepEqual(page.errors, []);
});

test("trigger now, then open the manual run", async () => {
    await page.goto(`${CONSOLE}/activities/${id}?zoom=hour`);
    await page.getByRole("button", { name: "Trigger now" }).click();
    await page.getByText("Triggered: run started.").waitFor();
    await page.getByRole("link", { name: "Open the run" }).click();
    await page.getByRole("heading", { name: /^Run / }).waitFor();
    await page.locator("dd", { hasText: /^manual$/ }).waitFor();
    await page.locator('h1 .badge[data-status="succeeded"]').waitFor({ timeout: 60_000 });
});

test("delete the activity; its runs stay readable", async () => {
    const runUrl = page.url();
    await page.goto(`${CONSOLE}/activities/${id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    await page.goto(`${CONSOLE}/activities?q=${encodeURIComponent(name)}`);
    await page.getByText("No activity matches.").waitFor();
    await page.goto(runUrl);
    await page.locator('h1 .badge[data-status="succeeded"]').waitFor();
    id = undefined;
});
