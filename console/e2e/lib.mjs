// Shared helpers of the console's end-to-end tests (node:test + playwright-core + axe-core).
import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

export const SERVICE = (process.env.ACP_CONSOLE_URL ?? "http://127.0.0.1:7900").replace(/\/+$/, "");
export const CONSOLE = `${SERVICE}/console`;
export const ADMIN = process.env.ACP_ADMIN_TOKEN ?? "";
export const READ = process.env.ACP_READ_TOKEN ?? "";
export const ARTEFACTS = resolve(process.env.ACP_ARTEFACTS ?? join(here, "../../target/artefacts/console"));
mkdirSync(ARTEFACTS, { recursive: true });

const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export const SIZES = {
    desktop: { width: 1280, height: 800 },
    mobile: { width: 390, height: 844 },
};

/** Headless Chromium as it is, with no watch on Content-Security-Policy. */
export async function launchUnwatched() {
    return chromium.launch({
        executablePath: process.env.ACP_CHROMIUM ?? "/usr/bin/chromium",
        args: ["--no-sandbox", "--disable-dev-shm-usage"],
        headless: true,
    });
}

/**
 * Headless Chromium whose every context records Content-Security-Policy
 * violations (into `browser.cspViolations` and the page's `errors`):
 * `browser.close()` then fails on any, so a test file fails when the console
 * needed anything its policy forbids.
 */
export async function launch() {
    const browser = await launchUnwatched();
    const violations = [];
    const newContext = browser.newContext.bind(browser);
    browser.newContext = async (options) => {
        const context = await newContext(options);
        await watchCsp(context, violations);
        return context;
    };
    const close = browser.close.bind(browser);
    browser.close = async (options) => {
        await close(options);
        if (violations.length > 0) throw new Error(`Content-Security-Policy violations:\n${violations.join("\n")}`);
    };
    browser.cspViolations = violations;
    return browser;
}

/**
 * Pushes into `into` each Content-Security-Policy violation of the context's
 * pages: the document's securitypolicyviolation events, and Chromium's own
 * console errors about the policy.
 */
export async function watchCsp(context, into) {
    await context.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (e) => {
            console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "an inline resource"} (${e.sourceFile}:${e.lineNumber})`);
        });
    });
    context.on("console", (message) => {
        const text = message.text();
        if (message.type() !== "error" || !/Content Security Policy|CSP violation/i.test(text)) return;
        const page = message.page();
        const entry = `${page?.url() ?? "?"}: ${text}`;
        into.push(entry);
        if (Array.isArray(page?.errors)) page.errors.push(entry);
    });
}

/** A page signed in with `token` (put in sessionStorage before the console loads). */
export async function signedIn(browser, token = ADMIN, { size = "desktop", scheme = "light" } = {}) {
    const context = await browser.newContext({ viewport: SIZES[size], colorScheme: scheme });
    if (token) {
        await context.addInitScript((t) => {
            // Once per tab, as if the key had been typed into the prompt.
            if (!sessionStorage.getItem("acp.e2e.seeded")) {
                sessionStorage.setItem("acp.e2e.seeded", "1");
                sessionStorage.setItem("acp.console.token", t);
            }
        }, token);
    }
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.errors = errors;
    return page;
}

/**
 * Calls the API directly (test setup), returning the parsed body; throws on a
 * non-2xx answer. `project` names the project it acts in (`Acp-Project`).
 */
export async function api(path, { method = "GET", body, token = ADMIN, ok = true, project } = {}) {
    const res = await fetch(`${SERVICE}${path}`, {
        method,
        headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(project === undefined ? {} : { "acp-project": project }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    if (ok && !res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return ok ? data : { status: res.status, data };
}

/** Polls `fn` until it returns a truthy value (or throws after `timeout`). */
export async function until(fn, { timeout = 60_000, interval = 500, what = "condition" } = {}) {
    const end = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            const v = await fn();
            if (v) return v;
        } catch (e) {
            last = e;
        }
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
        await new Promise((r) => setTimeout(r, interval));
    }
}

/** axe-core's serious and critical violations on the page as it is. */
export async function axe(page) {
    // Evaluated through the DevTools protocol, not added as an inline
    // <script>: the console's policy (rightly) refuses inline scripts.
    if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
    const result = await page.evaluate(async () => {
        // eslint-disable-next-line no-undef
        const r = await axe.run(document, { resultTypes: ["violations"] });
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
    });
    return result.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Screenshots of the page in both colour schemes and both sizes: `<name>-<scheme>-<size>.png`. */
export async function screenshots(page, name, ready) {
    const original = page.viewportSize();
    for (const scheme of ["light", "dark"]) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [size, vp] of Object.entries(SIZES)) {
            await page.setViewportSize(vp);
            if (ready) await ready(page);
            await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
            await page.screenshot({ path: join(ARTEFACTS, `${name}-${scheme}-${size}.png`), fullPage: true });
        }
    }
    await page.emulateMedia({ colorScheme: "light" });
    if (original) await page.setViewportSize(original);
}

/**
 * A local webhook sink: `/ok` answers 200, `/fail` 400, `/hang` never answers
 * (until `close`), `/m` as `mode` says. `hits` counts requests per path.
 */
export async function sink() {
    const hits = new Map();
    const hanging = new Set();
    const state = { mode: "ok" };
    const server = createServer((req, res) => {
        let path = (req.url ?? "/").split("?")[0];
        hits.set(path, (hits.get(path) ?? 0) + 1);
        req.resume();
        // `/m`: whatever `mode` says now (ok, fail or hang).
        if (path.startsWith("/m")) path = `/${state.mode}`;
        if (path.startsWith("/ok")) {
            res.writeHead(200, { "content-type": "application/json" }).end("{}");
        } else if (path.startsWith("/fail")) {
            // A 4xx is not retried: the task fails at once.
            res.writeHead(400, { "content-type": "text/plain" }).end("sink says no");
        } else if (path.startsWith("/hang")) {
            hanging.add(res);
        } else {
            res.writeHead(404).end();
        }
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address();
    return {
        get mode() {
            return state.mode;
        },
        set mode(m) {
            state.mode = m;
        },
        url: (p) => `http://127.0.0.1:${port}${p}`,
        hits,
        async close() {
            for (const r of hanging) r.destroy();
            server.closeAllConnections?.();
            await new Promise((r) => server.close(r));
        },
    };
}

export function uniq(prefix) {
    return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}
