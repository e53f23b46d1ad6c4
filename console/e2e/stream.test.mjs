// The change stream: the header says when it is live; after the connection
// drops, the console reconnects (a fresh stream token, `since` the last change
// seen) and what changed meanwhile appears without a reload.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { api, CONSOLE, launch, signedIn, uniq } from "./lib.mjs";

let browser;
let activity;

before(async () => {
    browser = await launch();
    activity = await api("/v1/activities", {
        method: "POST",
        body: { name: uniq("e2e-stream"), trigger: { type: "cron", cron: "0 4 1 1 *", timezone: "UTC" }, tasks: [{ task_type: "noop" }] },
    });
});

after(async () => {
    if (activity) await api(`/v1/activities/${activity.id}`, { method: "DELETE", ok: false });
    await browser?.close();
});

test("a dropped stream reconnects and replays what it missed", async () => {
    const page = await signedIn(browser);
    const streams = [];
    page.on("request", (r) => {
        if (new URL(r.url()).pathname === "/v1/stream") streams.push(new URL(r.url()).searchParams);
    });
    await page.goto(`${CONSOLE}/runs?activity=${activity.id}`);
    await page.getByText("No run matches.").waitFor();
    await page.locator('.live[data-state="live"]').waitFor();
    const first = await api(`/v1/activities/${activity.id}/trigger`, { method: "POST" });
    await page.locator(`tr[data-run="${first.run_id}"]`).waitFor();

    await page.context().setOffline(true);
    await page.locator('.live[data-state="reconnecting"]').waitFor();
    const second = await api(`/v1/activities/${activity.id}/trigger`, { method: "POST" });
    // Nothing arrives while offline.
    assert.equal(await page.locator(`tr[data-run="${second.run_id}"]`).count(), 0);
    await page.context().setOffline(false);
    await page.locator('.live[data-state="live"]').waitFor({ timeout: 60_000 });
    await page.locator(`tr[data-run="${second.run_id}"]`).waitFor();
    assert.equal(await page.evaluate(() => performance.getEntriesByType("navigation").length), 1, "no reload");
    // The reconnection asked for the changes after the last one seen, with a fresh token; never the API key.
    const last = streams.at(-1);
    assert.ok(streams.length >= 2, "reconnected");
    assert.match(last.get("since") ?? "", /^\d+$/);
    assert.match(last.get("token") ?? "", /^acps_/);
    assert.notEqual(last.get("token"), streams[0].get("token"));
    await page.context().close();
});
