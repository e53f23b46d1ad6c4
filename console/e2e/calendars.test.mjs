// Business calendars in the console: import an iCalendar file, see its
// holidays on the year grid, make a date a holiday and a weekend date a
// working day by choosing them, and undo it; what the API then holds.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { api, CONSOLE, launch, screenshots, signedIn, uniq } from "./lib.mjs";

let browser;
const made = [];
const activities = [];

before(async () => {
    browser = await launch();
});

after(async () => {
    for (const id of activities) await api(`/v1/activities/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    for (const id of made) await api(`/v1/calendars/${id}`, { method: "DELETE", ok: false }).catch(() => {});
    await browser?.close();
});

const ICS = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    "PRODID:-//e2e//EN",
    "BEGIN:VEVENT",
    "UID:e2e-1",
    "DTSTART;VALUE=DATE:20270705",
    "SUMMARY:Independence Day (observed)",
    "END:VEVENT",
    "BEGIN:VEVENT",
    "UID:e2e-2",
    "DTSTART;VALUE=DATE:20271225",
    "SUMMARY:Christmas Day",
    "END:VEVENT",
    "END:VCALENDAR",
    "",
].join("\r\n");

test("import a calendar, then edit its dates on the year grid", async () => {
    const page = await signedIn(browser);
    await page.goto(`${CONSOLE}/calendars`);
    await page.getByRole("heading", { name: "Calendars", level: 1 }).waitFor();
    const name = uniq("e2e-market-days");
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Time zone").fill("America/New_York");
    await page.getByLabel("iCalendar file (.ics)").setInputFiles({ name: "market.ics", mimeType: "text/calendar", buffer: Buffer.from(ICS) });
    await page.getByRole("button", { name: "Import" }).click();
    await page.getByRole("heading", { name, level: 1 }).waitFor();
    await page.getByText("Imported 2 event(s) as holidays.").waitFor();
    const id = page.url().match(/calendars\/([0-9a-f-]{36})/)?.[1];
    assert.ok(id, page.url());
    made.push(id);

    // The imported year, on the grid and in the list.
    await page.getByRole("button", { name: "Next year" }).click();
    await page.getByRole("heading", { name: "2027", level: 2, exact: true }).waitFor();
    await page.locator('[data-date="2027-07-05"][data-kind="holiday"]').waitFor();
    assert.match(await page.locator('[data-date="2027-07-05"]').getAttribute("aria-label"), /Independence Day \(observed\)/);
    assert.equal(await page.locator('[data-date="2027-07-03"]').getAttribute("data-kind"), "weekend");
    await page.getByTestId("holidays").getByText("2027-12-25: Christmas Day").waitFor();

    // A business day becomes a holiday.
    await page.locator('[data-date="2027-07-02"]').click();
    await page.getByRole("dialog").getByLabel("Holiday name").fill("Bridge day");
    await page.getByRole("dialog").getByRole("button", { name: "Make it a holiday" }).click();
    await page.locator('[data-date="2027-07-02"][data-kind="holiday"]').waitFor();
    // A weekend date becomes a working day.
    await page.locator('[data-date="2027-07-10"]').click();
    await page.getByRole("dialog").getByRole("button", { name: "Make it a working day" }).click();
    await page.locator('[data-date="2027-07-10"][data-kind="working_day"]').waitFor();

    let cal = await api(`/v1/calendars/${id}`);
    assert.deepEqual(
        cal.holidays.map((h) => [h.date, h.name]),
        [
            ["2027-07-02", "Bridge day"],
            ["2027-07-05", "Independence Day (observed)"],
            ["2027-12-25", "Christmas Day"],
        ],
    );
    assert.deepEqual(
        cal.working_days.map((w) => w.date),
        ["2027-07-10"],
    );
    assert.equal(cal.timezone, "America/New_York");

    // Undo the holiday.
    await page.locator('[data-date="2027-07-02"]').click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove the holiday" }).click();
    await page.locator('[data-date="2027-07-02"][data-kind="business"]').waitFor();
    cal = await api(`/v1/calendars/${id}`);
    assert.ok(!cal.holidays.some((h) => h.date === "2027-07-02"));
    assert.deepEqual(page.errors, []);
    await page.context().close();
});

test("an activity on a calendar: its form's calendar fields, its timeline's reasons", async () => {
    // Friday 2 July 2027 is a holiday: Friday's 09:00 rolls to Monday 5 July.
    const calendar = await api("/v1/calendars", {
        method: "POST",
        body: { name: uniq("e2e-desk"), timezone: "America/New_York", holidays: [{ date: "2027-07-02", name: "Bridge day" }], covered_until: "2027-12-31" },
    });
    made.push(calendar.id);
    const activity = await api("/v1/activities", {
        method: "POST",
        body: {
            name: uniq("e2e-fridays"),
            trigger: { type: "cron", cron: "0 9 * * 5", timezone: "America/New_York", calendar: { id: calendar.id, mode: "business_days", roll: "next" } },
            tasks: [{ task_type: "noop" }],
        },
    });
    activities.push(activity.id);
    const page = await signedIn(browser);

    // The timeline's table says why the Friday did not run and where it went.
    await page.goto(`${CONSOLE}/activities/${activity.id}?zoom=week&at=2027-06-30T00:00:00Z`);
    await page.getByText("The times as a table").click();
    const rolled = `rolled from 2027-07-02T09:00 to 2027-07-05T09:00 (holiday: "Bridge day" in ${calendar.name} v1)`;
    const reasons = page.getByTestId("calendar-reason");
    await reasons.filter({ hasText: rolled }).first().waitFor();
    assert.equal(await reasons.filter({ hasText: rolled }).count(), 2, "on the Friday and on the Monday");
    await screenshots(page, "activity-calendar-timeline");

    // The form shows the calendar fields as the trigger names them; changing
    // the roll changes what is saved.
    await page.goto(`${CONSOLE}/activities/${activity.id}/edit`);
    const fields = page.getByTestId("calendar-fields");
    await fields.getByRole("option", { name: new RegExp(calendar.name) }).waitFor({ state: "attached" });
    assert.equal(await fields.getByLabel("Business calendar").inputValue(), calendar.id);
    assert.equal(await fields.getByLabel("Calendar mode").inputValue(), "business_days");
    assert.equal(await fields.getByLabel("On a non-business day").inputValue(), "next");
    assert.equal(await fields.getByLabel("Beyond coverage").inputValue(), "run");
    await fields.getByLabel("On a non-business day").selectOption("previous");
    await page.locator("ol.times li").first().waitFor();
    await screenshots(page, "activity-calendar-form");
    await page.getByRole("button", { name: /^Save/ }).click();
    await page.waitForURL(new RegExp(`/activities/${activity.id}(\\?|$)`));
    const saved = await api(`/v1/activities/${activity.id}`);
    assert.deepEqual(saved.trigger.calendar, { id: calendar.id, mode: "business_days", roll: "previous", beyond_coverage: "run" });
    assert.deepEqual(page.errors, []);
    await page.context().close();
});

test("a business-day offset on a calendar: its words, and the calendar's holidays on the heatmap", async () => {
    const calendar = await api("/v1/calendars", {
        method: "POST",
        body: {
            name: uniq("e2e-nyse"),
            timezone: "America/New_York",
            holidays: [
                { date: "2027-07-05", name: "Independence Day (observed)" },
                { date: "2027-12-24", name: "Christmas Day (observed)" },
            ],
            covered_until: "2027-12-31",
        },
    });
    made.push(calendar.id);
    const activity = await api("/v1/activities", {
        method: "POST",
        body: {
            name: uniq("e2e-third-day"),
            trigger: { type: "cron", cron: "0 9 BD3 * *", timezone: "America/New_York", calendar: { id: calendar.id, mode: "business_days", roll: "next" } },
            tasks: [{ task_type: "noop" }],
        },
    });
    activities.push(activity.id);
    const page = await signedIn(browser);
    const words = `09:00 on the 3rd business day, America/New_York; DST: first/shift; misfire: skip (grace 1 min) · ${calendar.name} (business days)`;

    // The activity page: the trigger in words with the calendar's name, and
    // the holidays marked on 2027's heatmap with their names.
    await page.goto(`${CONSOLE}/activities/${activity.id}?year=2027`);
    await page.getByTestId("trigger-words").filter({ hasText: calendar.name }).waitFor();
    assert.equal(await page.getByTestId("trigger-words").textContent(), words);
    const holidays = page.locator(".heatmap rect.holiday");
    await holidays.first().waitFor({ state: "attached" });
    assert.equal(await holidays.count(), 2);
    assert.equal(await holidays.first().getAttribute("data-holiday"), "Independence Day (observed)");
    assert.match(await holidays.first().locator("title").textContent(), /^2027-07-05: .*; holiday: Independence Day \(observed\)$/);
    assert.match(await page.locator("svg.heatmap").getAttribute("aria-label"), /2 holidays$/);
    await page.getByText("holiday (the calendar's)").waitFor();
    await screenshots(page, "activity-heatmap-holidays");

    // The form has no roll for an offset, and previews its times.
    await page.goto(`${CONSOLE}/activities/${activity.id}/edit`);
    await page.getByTestId("offset-note").filter({ hasText: "the 3rd business day" }).waitFor();
    assert.equal(await page.getByTestId("calendar-fields").getByLabel("On a non-business day").count(), 0);
    await page.locator("ol.times li").first().waitFor();

    // The list names the calendar too.
    await page.goto(`${CONSOLE}/activities?q=${encodeURIComponent(activity.name)}`);
    const row = page.locator(`tr[data-activity="${activity.id}"] td.trigger`);
    await row.filter({ hasText: calendar.name }).waitFor();
    assert.equal(await row.textContent(), words);
    assert.deepEqual(page.errors, []);
    await page.context().close();
});
