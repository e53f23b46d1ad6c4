import type { JSX } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import { fetchTimeline, type Activity, type Entry } from "../../api";
import { activityZone, fmtTime, rateOf, zoneOf } from "../../format";
import { href, Link, useLoc } from "../../router";
import { countKeys, Legend, Timeline } from "../../timeline";
import { ErrorBox, Loading, useAsync, useZoneMode, ZoneSwitch } from "../../ui";
import { TimesList } from "./timesList";
import { WindowNotes } from "./windowNotes";

type Zoom = "hour" | "day" | "week" | "month";
const SPAN: Record<Zoom, number> = { hour: 3600_000, day: 86400_000, week: 7 * 86400_000, month: 30 * 86400_000 };

/** The timeline strip of a window (zoom, moved by links), its legend, notes and table. */
export function TimelineSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const loc = useLoc();
    const mode = useZoneMode();
    const zone = zoneOf(mode, activityZone(a));
    const zoomQ = loc.query.get("zoom");
    // Without a choice in the URL: a day, or an hour when a day would hold more than 1,500 times.
    const zoom: Zoom = zoomQ === "hour" || zoomQ === "day" || zoomQ === "week" || zoomQ === "month" ? zoomQ : rateOf(a.trigger) * 86400 > 1500 ? "hour" : "day";
    const at = loc.query.get("at");
    const span = SPAN[zoom];
    // The window is computed when it is fetched: a window holding "now" slides with every refresh.
    const windowAt = (t: number) => {
        if (at) {
            const x = new Date(at).getTime();
            if (!Number.isNaN(x)) return { from: x, to: x + span };
        }
        const minute = Math.floor(t / 60_000) * 60_000;
        const from = minute - Math.round(span * 0.75);
        return { from, to: from + span };
    };
    const tl = useAsync(async () => {
        const now = Date.now();
        const r = windowAt(now);
        const entries = await fetchTimeline(a.id, r.from, r.to, rateOf(a.trigger));
        return { ...r, now, entries };
    }, [a.id, zoom, at, a.version]);
    // A change on the stream refreshes it (coalesced with a load in flight).
    const first = useRef(true);
    useEffect(() => {
        if (first.current) first.current = false;
        else tl.reload();
    }, [tick]);
    // Time moves on without changes on the stream (planned times fall due, overlap skips):
    // a window that holds "now" refreshes every 10 s while the tab is visible.
    useEffect(() => {
        if (at) return;
        const h = window.setInterval(() => {
            if (document.visibilityState === "visible") tl.reload();
        }, 10_000);
        return () => window.clearInterval(h);
    }, [at]);
    const range = tl.data ?? { ...windowAt(Date.now()), now: Date.now() };
    const now = range.now;
    const entries: Entry[] = tl.data?.entries ?? [];
    const counts = useMemo(() => countKeys(entries, now), [entries, now]);
    const shift = (d: number) => href(loc.path, new URLSearchParams({ ...Object.fromEntries(loc.query), at: new Date(range.from + d).toISOString() }));
    const zq = (z: Zoom) => {
        const q = new URLSearchParams(loc.query);
        q.set("zoom", z);
        q.delete("at");
        return href(loc.path, q);
    };
    const nowQ = new URLSearchParams(loc.query);
    nowQ.delete("at");
    return (
        <section class="block" aria-labelledby="tl-title">
            <div class="head">
                <h2 id="tl-title">Timeline</h2>
                <div class="toolbar">
                    <div class="seg" role="group" aria-label="Zoom">
                        {(["hour", "day", "week", "month"] as Zoom[]).map((z) => (
                            <Link key={z} href={zq(z)} aria-current={z === zoom ? "true" : undefined}>
                                {z}
                            </Link>
                        ))}
                    </div>
                    <div class="seg" role="group" aria-label="Move the window">
                        <Link href={shift(-span)} aria-label={`Previous ${zoom}`}>
                            ←
                        </Link>
                        <Link href={href(loc.path, nowQ)}>now</Link>
                        <Link href={shift(span)} aria-label={`Next ${zoom}`}>
                            →
                        </Link>
                    </div>
                    <ZoneSwitch zoneLabel={activityZone(a)} />
                </div>
            </div>
            <p class="muted small">
                {fmtTime(new Date(range.from).toISOString(), zone, "short")} – {fmtTime(new Date(range.to).toISOString(), zone, "short")} ({zone}) · {entries.length} nominal
                times {tl.loading && "· loading…"}
            </p>
            <ErrorBox error={tl.error} />
            {tl.data === undefined && tl.loading ? <Loading what="the timeline" /> : <Timeline entries={entries} from={range.from} to={range.to} zone={zone} now={now} />}
            <Legend counts={counts} />
            <WindowNotes entries={entries} zone={zone} />
            <TimesList entries={entries} zone={zone} now={now} />
        </section>
    );
}
