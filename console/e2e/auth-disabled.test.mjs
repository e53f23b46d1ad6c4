// With authentication disabled (ACP_AUTH_DISABLED) the console asks for no
// key and offers every action. scripts/console check runs a second `acp
// serve` with authentication off and passes its address as
// ACP_CONSOLE_OPEN_URL.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launch } from "./lib.mjs";

const OPEN = process.env.ACP_CONSOLE_OPEN_URL?.replace(/\/+$/, "");
let browser;

before(async () => {
    browser = await launch();
});

after(async () => {
    await browser?.close();
});

test("with authentication disabled there is no key prompt and every action is offered", { skip: OPEN ? false : "ACP_CONSOLE_OPEN_URL is not set" }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${OPEN}/console/`);
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    assert.equal(await page.getByLabel(/API key/i).count(), 0, "a key prompt was shown");
    await page.getByText("auth off").waitFor();
    await page.getByRole("link", { name: "New activity" }).or(page.getByRole("button", { name: "New activity" })).first().waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, "nothing was stored");
    await context.close();
});
