// Projects: two teams' projects, each with an activity. The switcher in the
// header moves the console between them (each project its own URL, every
// call naming it), the Projects view lists them with quotas and usage and
// links into each, and a project's key sees its own project only.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { api, axe, CONSOLE, launch, screenshots, signedIn, uniq } from "./lib.mjs";

let browser;
const A = uniq("e2e-team-a");
const B = uniq("e2e-team-b");
const made = [];
let inA;
let inB;
let bReader;

/** An activity of `project`, made by the operator acting in it. */
async function activityIn(project, name) {
    const a = await api("/v1/activities", {
        method: "POST",
        project,
        body: { name, trigger: { type: "cron", cron: "0 3 * * *", timezone: "Europe/Berlin" }, tasks: [{ task_type: "noop" }] },
    });
    made.push([project, a.id]);
    return a;
}

before(async () => {
    browser = await launch();
    await api("/v1/projects", {
        method: "POST",
        body: { id: A, name: "Team A", weight: 3, quotas: { activities: 5, sources: 2, runs_running: 4, runs_guaranteed: 1, events_per_second: 20 } },
    });
    await api("/v1/projects", { method: "POST", body: { id: B, name: "Team B" } });
    inA = await activityIn(A, uniq("e2e-a-nightly"));
    inB = await activityIn(B, uniq("e2e-b-nightly"));
    bReader = (await api("/v1/keys", { method: "POST", body: { name: uniq("e2e-b-reader"), scope: "read", project: B } })).token;
});

after(async () => {
    for (const [project, id] of made) await api(`/v1/activities/${id}`, { method: "DELETE", project, ok: false }).catch(() => {});
    await browser?.close();
});

test("the switcher moves the activities page from one project to another", async () => {
    const page = await signedIn(browser);
    await page.goto(`${CONSOLE}/p/${A}/activities`);
    await page.locator(`tr[data-activity="${inA.id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-activity="${inB.id}"]`).count(), 0, "B's activity is not in A's list");
    const switcher = page.locator("#project-switcher");
    assert.equal(await switcher.inputValue(), A);
    await screenshots(page, "project-activities", (p) => p.locator(`tr[data-activity="${inA.id}"]`).waitFor());

    await switcher.selectOption(B);
    await page.waitForURL(new RegExp(`/console/p/${B}/activities$`));
    await page.locator(`tr[data-activity="${inB.id}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-activity="${inA.id}"]`).count(), 0, "A's activity is not in B's list");

    // A link inside the project stays in it: the activity's page opens.
    await page.locator(`tr[data-activity="${inB.id}"] a`).first().click();
    await page.waitForURL(new RegExp(`/console/p/${B}/activities/${inB.id}`));
    await page.getByRole("heading", { name: inB.name, level: 1 }).waitFor();
    // Without a project in the address the operator acts in `default`.
    await page.goto(`${CONSOLE}/activities`);
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    assert.equal(await page.locator("#project-switcher").inputValue(), "default");
    assert.equal(await page.locator(`tr[data-activity="${inA.id}"], tr[data-activity="${inB.id}"]`).count(), 0);
    assert.deepEqual(page.errors, []);
    await page.context().close();
});

test("the projects view shows quotas and usage, and links into each project", async () => {
    const page = await signedIn(browser);
    await page.goto(`${CONSOLE}/p/${A}/activities`);
    await page.getByRole("link", { name: "Projects" }).click();
    await page.waitForURL(/\/console\/projects$/);
    const rowA = page.locator(`tr[data-project="${A}"]`);
    await rowA.waitFor();
    await page.locator(`tr[data-project="${B}"]`).waitFor();
    const cell = (row, label) => row.locator(`td[data-label="${label}"]`).innerText();
    assert.equal(await cell(rowA, "Weight"), "3");
    assert.match(await cell(rowA, "Activities"), /^1 \/ 5$/);
    assert.match(await cell(rowA, "Runs running"), /^0 \/ 4\s+1 guaranteed$/);
    assert.match(await cell(rowA, "Events"), /20\/s, burst 20/);
    assert.match(await cell(rowA, "Sources"), /^0 \/ 2$/);
    assert.match(await cell(rowA, "Subscriptions"), /^0 \/ no limit$/);
    const rowB = page.locator(`tr[data-project="${B}"]`);
    assert.match(await cell(rowB, "Activities"), /^1 \/ no limit$/);
    assert.deepEqual(await axe(page), []);
    await screenshots(page, "projects", (p) => p.locator(`tr[data-project="${A}"]`).waitFor());

    await rowB.getByRole("link", { name: B }).click();
    await page.waitForURL(new RegExp(`/console/p/${B}/activities$`));
    await page.locator(`tr[data-activity="${inB.id}"]`).waitFor();
    assert.deepEqual(page.errors, []);
    await page.context().close();
});

test("a project's key sees its own project, read-only, and no projects view", async () => {
    const page = await signedIn(browser, bReader);
    await page.goto(`${CONSOLE}/activities`);
    await page.locator(`tr[data-activity="${inB.id}"]`).waitFor();
    const shown = page.locator(`header .project[data-project="${B}"]`);
    await shown.waitFor();
    assert.equal(await page.locator("#project-switcher").count(), 0, "no switcher to pick from");
    assert.equal(await page.getByRole("link", { name: "Projects" }).count(), 0);
    assert.equal(await page.locator(`tr[data-activity="${inA.id}"]`).count(), 0);
    await screenshots(page, "project-key", (p) => p.locator(`tr[data-activity="${inB.id}"]`).waitFor());
    assert.deepEqual(page.errors, []);
    await page.context().close();
});
