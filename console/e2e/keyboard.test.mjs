// Keyboard only: create an activity, pause it with a note, resume it; every
// control reached with Tab, used with Enter, typing or the arrow keys, with a
// visible focus.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { api, CONSOLE, launch, signedIn, uniq } from "./lib.mjs";

let browser;
let page;
const name = uniq("e2e-keys");

before(async () => {
    browser = await launch();
    page = await signedIn(browser);
});

after(async () => {
    const list = await api(`/v1/activities?q=${encodeURIComponent(name)}`).catch(() => ({ items: [] }));
    for (const a of list.items) await api(`/v1/activities/${a.id}`, { method: "DELETE", ok: false });
    await browser?.close();
});

/** The focused element: its accessible-ish name and whether its focus is visible. */
const focused = () =>
    page.evaluate(() => {
        const e = document.activeElement;
        if (!e || e === document.body) return { name: "", visible: false };
        const label = e.getAttribute("aria-label") || (e.labels && e.labels[0] ? e.labels[0].innerText : "") || e.innerText || "";
        const s = getComputedStyle(e);
        return { name: label.trim(), visible: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0, tag: e.tagName };
    });

/** Presses Tab until the focused control's name matches `re`. */
async function tabTo(re, max = 120) {
    for (let i = 0; i < max; i++) {
        await page.keyboard.press("Tab");
        const f = await focused();
        if (re.test(f.name)) {
            assert.ok(f.visible, `the focus on "${f.name}" is visible`);
            return f;
        }
    }
    throw new Error(`Tab never reached ${re}`);
}

test("keyboard only: create → pause with a note → resume", async () => {
    await page.goto(`${CONSOLE}/activities`);
    await page.getByRole("heading", { name: "Activities" }).waitFor();

    await tabTo(/^New activity$/);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "New activity" }).waitFor();
    await tabTo(/^Name/);
    await page.keyboard.type(name);
    await tabTo(/^Kind/);
    await page.keyboard.press("ArrowDown"); // cron → interval
    await page.getByLabel(/^Every/).waitFor();
    await tabTo(/^Every/);
    await page.keyboard.press("Control+A");
    await page.keyboard.type("PT1M");
    await page.locator(".preview ol.times li").first().waitFor();
    await tabTo(/^Create activity$/);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name, level: 1 }).waitFor();

    await tabTo(/^Pause$/);
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    // The note has the focus when the dialog opens.
    assert.match((await focused()).name, /^Note/);
    await page.keyboard.type("keyboard says stop");
    await tabTo(/^Pause$/);
    await page.keyboard.press("Enter");
    await page.getByTestId("paused-badge").waitFor();
    assert.match(await page.getByTestId("paused-badge").innerText(), /keyboard says stop/);

    await tabTo(/^Resume$/);
    await page.keyboard.press("Enter");
    await dialog.getByTestId("policy").waitFor();
    await tabTo(/^Resume$/);
    await page.keyboard.press("Enter");
    await dialog.getByText("Resumed.").waitFor();
    await tabTo(/^Close$/);
    await page.keyboard.press("Enter");
    await page.getByTestId("paused-badge").waitFor({ state: "detached" });
    // Escape closes a dialog too.
    await tabTo(/^Pause$/);
    await page.keyboard.press("Enter");
    await dialog.waitFor();
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.deepEqual(page.errors, []);
});

test("the timeline answers the keyboard: arrows move, the current time is announced", async () => {
    await tabTo(/^Timeline of/);
    await page.keyboard.press("ArrowLeft");
    const tip = page.getByTestId("timeline-tip");
    await tip.waitFor();
    const live = await page.locator("#tl-current").innerText();
    assert.match(live, /UTC/);
    await page.keyboard.press("Home");
    assert.notEqual(await page.locator("#tl-current").innerText(), live);
});
