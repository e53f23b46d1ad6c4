// The console's Content-Security-Policy as the browser applies it: the
// console runs under it without a violation, and markup injected into the
// page (as a stored XSS would put there) neither runs a script nor styles
// anything. It also shows that watchCsp, which every other test file relies
// on through launch(), does see violations.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CONSOLE, launchUnwatched, signedIn, until, watchCsp } from "./lib.mjs";

let browser;

before(async () => {
    browser = await launchUnwatched();
});

after(async () => {
    await browser?.close();
});

test("the console runs under a strict policy that refuses injected inline script and style", async () => {
    const response = await fetch(`${CONSOLE}/`);
    const policy = response.headers.get("content-security-policy") ?? "";
    const directives = policy.split(";").map((d) => d.trim());
    for (const wanted of ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "form-action 'self'"]) {
        assert.ok(directives.includes(wanted), `${wanted} is not in ${policy}`);
    }
    assert.doesNotMatch(policy, /unsafe-/);

    const page = await signedIn(browser);
    const seen = [];
    await watchCsp(page.context(), seen);
    await page.goto(`${CONSOLE}/activities`);
    await page.getByRole("heading", { name: "Activities" }).waitFor();
    assert.deepEqual(seen, [], "the console needed something its policy forbids");

    const injected = await page.evaluate(async () => {
        const script = document.createElement("script");
        script.textContent = "window.acpInjected = true";
        document.body.append(script);
        const holder = document.createElement("div");
        holder.innerHTML = '<p id="acp-injected" style="color: rgb(1, 2, 3)">injected</p>';
        document.body.append(holder);
        await new Promise((r) => setTimeout(r, 100));
        const p = document.getElementById("acp-injected");
        return { ran: "acpInjected" in window, colour: p ? getComputedStyle(p).color : "" };
    });
    assert.equal(injected.ran, false, "an injected inline script ran");
    assert.notEqual(injected.colour, "rgb(1, 2, 3)", "an injected inline style applied");
    await until(() => seen.some((v) => /script-src/.test(v)) && seen.some((v) => /style-src/.test(v)), {
        timeout: 5000,
        interval: 100,
        what: "a script-src and a style-src violation to be reported",
    });
    // page.errors holds the violations too; anything else was the page throwing.
    assert.deepEqual(page.errors.filter((e) => !seen.includes(e)), [], "the page threw");
    await page.context().close();
});
