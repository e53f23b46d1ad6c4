// Benchmark 10 (scripts/bench): one activity's page in the console against
// the same schedule's page in the Temporal UI, each opened in headless
// Chromium (Debian's, driven by playwright-core) in a fresh context, several
// times; prints one JSON object with the medians.
//
// Environment: ACP_BENCH_CONSOLE (service base URL), ACP_BENCH_TOKEN (a read
// key), ACP_BENCH_ACTIVITY (the activity's ID), ACP_BENCH_CELLS (how many
// times the 7-day window holds), ACP_BENCH_TEMPORAL_UI (the dev server's UI,
// optional), ACP_BENCH_NAMESPACE, ACP_BENCH_LOADS (default 5), ACP_CHROMIUM.
import { chromium } from "playwright-core";

const env = (name, fallback) => {
    const v = process.env[name] ?? fallback;
    if (v === undefined) throw new Error(`${name} is not set`);
    return v;
};
const base = env("ACP_BENCH_CONSOLE").replace(/\/+$/, "");
const token = env("ACP_BENCH_TOKEN");
const activity = env("ACP_BENCH_ACTIVITY");
const cells = Number(env("ACP_BENCH_CELLS"));
const temporalUi = process.env.ACP_BENCH_TEMPORAL_UI;
const namespace = env("ACP_BENCH_NAMESPACE", "default");
const loads = Number(env("ACP_BENCH_LOADS", "5"));

const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? null : s[Math.floor((s.length - 1) / 2)];
};

/** Bytes of JS and CSS as they crossed the wire (compressed when served so). */
function watchTransfer(page) {
    const seen = { js: 0, css: 0, requests: 0 };
    page.on("requestfinished", async (request) => {
        const type = request.resourceType();
        if (type !== "script" && type !== "stylesheet") return;
        try {
            const sizes = await request.sizes();
            seen[type === "script" ? "js" : "css"] += sizes.responseBodySize;
            seen.requests += 1;
        } catch {
            // The page moved on; not counted.
        }
    });
    return seen;
}

async function firstContentfulPaint(page) {
    return page.evaluate(() => {
        const fcp = performance.getEntriesByName("first-contentful-paint")[0];
        return fcp ? fcp.startTime : null;
    });
}

async function consoleLoad(browser) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((t) => sessionStorage.setItem("acp.console.token", t), token);
    const page = await context.newPage();
    const transfer = watchTransfer(page);
    await page.goto(`${base}/console/activities/${activity}?zoom=week`, { waitUntil: "commit" });
    // Interactive: the timeline canvas is drawn with every time of the week.
    const interactive = await page.waitForFunction(
        (n) => {
            const drawn = document.querySelector("canvas.timeline[data-drawn]")?.getAttribute("data-drawn");
            return drawn !== undefined && Number(drawn) >= n ? performance.now() : null;
        },
        cells,
        { timeout: 60_000, polling: "raf" },
    );
    const ready = await interactive.jsonValue();
    const fcp = await firstContentfulPaint(page);
    await page.waitForLoadState("networkidle");
    const shown = await page.evaluate(() => document.querySelector("canvas.timeline")?.getAttribute("aria-label") ?? "");
    await context.close();
    return { fcp, ready, transfer, shown };
}

async function temporalLoad(browser) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const transfer = watchTransfer(page);
    const schedule = `activity-${activity}`;
    await page.goto(`${temporalUi}/namespaces/${namespace}/schedules/${schedule}`, { waitUntil: "commit" });
    // Ready: the schedule's page shows its ID and its upcoming runs have loaded.
    const shown = await page.waitForFunction(
        (id) => (document.body?.innerText.includes(id) && /Upcoming Runs/i.test(document.body.innerText) ? performance.now() : null),
        schedule,
        { timeout: 60_000, polling: "raf" },
    );
    const ready = await shown.jsonValue();
    await page.waitForLoadState("networkidle");
    const fcp = await firstContentfulPaint(page);
    await context.close();
    return { fcp, ready, transfer };
}

async function measure(load, browser) {
    const runs = [];
    // The first load warms the server's caches; not counted.
    await load(browser);
    for (let i = 0; i < loads; i += 1) runs.push(await load(browser));
    return {
        loads,
        fcp_ms: median(runs.map((r) => r.fcp)),
        ready_ms: median(runs.map((r) => r.ready)),
        ready_max_ms: Math.max(...runs.map((r) => r.ready)),
        js_bytes: runs[0].transfer.js,
        css_bytes: runs[0].transfer.css,
        requests: runs[0].transfer.requests,
        shown: runs[0].shown,
    };
}

const browser = await chromium.launch({
    executablePath: env("ACP_CHROMIUM", "/usr/bin/chromium"),
    args: ["--no-sandbox", "--disable-gpu"],
});
try {
    const result = { console: await measure(consoleLoad, browser) };
    if (temporalUi) result.temporal_ui = await measure(temporalLoad, browser);
    console.log(JSON.stringify(result));
} finally {
    await browser.close();
}
