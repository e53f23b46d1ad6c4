import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { getRun, type Entry, type Run } from "./api";
import { duration, fmtTime, runDuration } from "./format";
import { cellAt, cellRect, cellsPerRow, lastAtOrBefore, layoutOf, moveFocus, placeOf } from "./grid";
import { cellKey, colour, RUN_STATUSES, TIMELINE_REASONS, words } from "./palette";
import { href, navigate } from "./router";

export type { Entry };

export interface TimelineProps {
    entries: Entry[];
    from: number;
    to: number;
    zone: string;
    /** When the paused spans and "planned" are judged. */
    now: number;
}

/** The timeline strip: a cell per nominal time, drawn on one canvas, with keyboard and pointer access. */
export function Timeline({ entries, from, to, zone, now }: TimelineProps): JSX.Element {
    const wrap = useRef<HTMLDivElement>(null);
    const canvas = useRef<HTMLCanvasElement>(null);
    const [width, setWidth] = useState(0);
    // The focused time (not its index: the window slides as time passes).
    const [focusT, setFocusT] = useState<number | null>(null);
    const [hover, setHover] = useState<number | null>(null);
    const [runs, setRuns] = useState<Record<string, Run>>({});
    const [schemeTick, setSchemeTick] = useState(0);
    const times = useMemo(() => Float64Array.from(entries, (e) => new Date(e.scheduled_for).getTime()), [entries]);
    const keys = useMemo(() => entries.map((e, i) => cellKey(e.status, e.reason, times[i]! > now)), [entries, times, now]);
    const focus = useMemo(() => {
        if (focusT === null || times.length === 0) return null;
        return lastAtOrBefore(times, focusT);
    }, [focusT, times]);
    const setFocus = (i: number | null) => setFocusT(i === null ? null : (times[i] ?? null));
    useLayoutEffect(() => {
        const el = wrap.current;
        if (!el) return;
        const ro = new ResizeObserver(() => setWidth(Math.floor(el.clientWidth)));
        ro.observe(el);
        setWidth(Math.floor(el.clientWidth));
        const mq = window.matchMedia("(prefers-color-scheme: dark)");
        const onScheme = () => setSchemeTick((t) => t + 1);
        mq.addEventListener("change", onScheme);
        return () => {
            ro.disconnect();
            mq.removeEventListener("change", onScheme);
        };
    }, []);
    const L = useMemo(() => layoutOf(entries.length, from, to, Math.max(width, 100)), [entries.length, from, to, width]);
    const geom = (i: number) => cellRect(L, from, times[i]!);
    useEffect(() => {
        const c = canvas.current;
        if (!c || width === 0) return;
        const dpr = window.devicePixelRatio || 1;
        const W = L.width + L.gutter;
        c.width = Math.floor(W * dpr);
        c.height = Math.floor(L.height * dpr);
        c.style.height = `${L.height}px`;
        const g = c.getContext("2d");
        if (!g) return;
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        g.clearRect(0, 0, W, L.height);
        if (L.gutter > 0) {
            // Each row's start time, where it fits.
            const muted = getComputedStyle(document.documentElement).getPropertyValue("--muted").trim() || "#666";
            g.fillStyle = muted;
            g.font = `${Math.min(11, L.rowH)}px system-ui, sans-serif`;
            g.textBaseline = "middle";
            const every = Math.max(1, Math.ceil(12 / L.rowH));
            const label = L.rowSpan >= 86400_000 ? "day" : L.rowSpan >= 3600_000 && (to - from) > 86400_000 ? "short" : "time";
            for (let r = 0; r < L.rows; r += every) {
                const iso = new Date(from + r * L.rowSpan).toISOString();
                let text = fmtTime(iso, zone, label === "time" ? "short" : label);
                if (label === "time") text = text.slice(11);
                else if (label === "short") text = text.slice(5);
                g.fillText(text, 0, r * L.rowH + L.rowH / 2, L.gutter - 4);
            }
        }
        // One fill style per legend key: a batch of rects per colour.
        const byKey = new Map<string, number[]>();
        keys.forEach((k, i) => {
            let a = byKey.get(k);
            if (!a) byKey.set(k, (a = []));
            a.push(i);
        });
        for (const [k, idx] of byKey) {
            g.fillStyle = colour(k);
            g.beginPath();
            for (const i of idx) {
                const r = geom(i);
                g.rect(r.x, r.y, r.w, r.h);
            }
            g.fill();
        }
        // Markers: DST notes (a triangle) and retried runs (a dot).
        const ink = getComputedStyle(document.documentElement).getPropertyValue("--fg").trim() || "#000";
        g.fillStyle = ink;
        g.beginPath();
        entries.forEach((e, i) => {
            if (e.dst && e.dst !== "normal") {
                const r = geom(i);
                const s = Math.min(r.w, r.h, 8);
                g.moveTo(r.x, r.y);
                g.lineTo(r.x + s, r.y);
                g.lineTo(r.x, r.y + s);
                g.closePath();
            }
            if ((e.attempts ?? 1) > 1) {
                const r = geom(i);
                const s = Math.max(1.5, Math.min(r.w, r.h) / 5);
                g.moveTo(r.x + r.w - s - 1 + s, r.y + r.h - s - 1);
                g.arc(r.x + r.w - s - 1, r.y + r.h - s - 1, s, 0, Math.PI * 2);
            }
        });
        g.fill();
        // "Now".
        if (now > from && now < to) {
            const { row, x } = placeOf(L, from, now);
            g.fillStyle = ink;
            g.fillRect(x, row * L.rowH, 2, L.rowH);
        }
        if (c.dataset["drawn"] === undefined) performance.mark("acp:timeline-drawn", { detail: entries.length });
        c.dataset["drawn"] = String(entries.length);
        const sel = focus ?? hover;
        if (sel !== null && sel < entries.length) {
            const r = geom(sel);
            g.strokeStyle = ink;
            g.lineWidth = 2;
            g.strokeRect(r.x - 1, r.y - 1, r.w + 2, r.h + 2);
        }
    }, [L, keys, entries, focus, hover, schemeTick, now, zone]);
    const pick = (ev: MouseEvent): number | null => {
        const c = canvas.current;
        if (!c || entries.length === 0) return null;
        const b = c.getBoundingClientRect();
        return cellAt(L, from, times, ev.clientX - b.left, ev.clientY - b.top);
    };
    const shown = focus ?? hover;
    const cur = shown !== null ? entries[shown] : undefined;
    useEffect(() => {
        if (!cur?.run_id || runs[cur.run_id]) return;
        const id = cur.run_id;
        const h = window.setTimeout(() => {
            void getRun(id).then((data) => data && setRuns((m) => ({ ...m, [id]: data })));
        }, 120);
        return () => window.clearTimeout(h);
    }, [cur?.run_id]);
    const describe = (i: number): string => {
        const e = entries[i]!;
        const k = keys[i]!;
        const parts = [fmtTime(e.scheduled_for, zone), words(k)];
        if (e.dst && e.dst !== "normal") parts.push(e.dst === "dst_gap" ? "DST gap" : "DST repeat");
        if (e.calendar) parts.push(e.calendar);
        if ((e.attempts ?? 1) > 1) parts.push(`${e.attempts} attempts`);
        const run = e.run_id ? runs[e.run_id] : undefined;
        if (run) parts.push(`duration ${runDuration(run)}`);
        if (e.run_id) parts.push("Enter opens the run");
        return parts.join(" · ");
    };
    const open = (i: number) => {
        const e = entries[i];
        if (e?.run_id) navigate(href(`/runs/${e.run_id}`));
    };
    const onKey = (ev: KeyboardEvent) => {
        if (entries.length === 0) return;
        if (ev.key === "Enter" || ev.key === " ") {
            if (focus !== null) open(focus);
            ev.preventDefault();
            return;
        }
        const i = moveFocus(ev.key, focus, entries.length, cellsPerRow(L, from, to, entries.length));
        if (i === null) return;
        ev.preventDefault();
        setFocus(i);
    };
    const tipGeom = shown !== null && shown < entries.length ? geom(shown) : null;
    const run = cur?.run_id ? runs[cur.run_id] : undefined;
    return (
        <div class="timeline-wrap" ref={wrap}>
            <canvas
                ref={canvas}
                class="timeline"
                tabIndex={0}
                role="application"
                aria-roledescription="timeline"
                aria-label={`Timeline of ${entries.length} nominal times from ${fmtTime(new Date(from).toISOString(), zone, "short")} to ${fmtTime(new Date(to).toISOString(), zone, "short")}. Arrow keys move between times, Enter opens a time's run.`}
                aria-describedby="tl-current"
                width={L.width + L.gutter}
                height={L.height}
                onKeyDown={onKey}
                onFocus={() => focus === null && entries.length > 0 && setFocus(Math.max(0, entries.findIndex((_, i) => times[i]! > now) - 1))}
                onBlur={() => setFocus(null)}
                onMouseMove={(e) => setHover(pick(e))}
                onMouseLeave={() => setHover(null)}
                onClick={(e) => {
                    const i = pick(e);
                    if (i !== null) open(i);
                }}
            />
            <p id="tl-current" class="sr-only" aria-live="polite">
                {focus !== null && focus < entries.length ? describe(focus) : ""}
            </p>
            {cur && tipGeom && shown !== null && (
                <div
                    class="tl-tip"
                    data-testid="timeline-tip"
                    data-key={keys[shown]}
                    data-colour={colour(keys[shown]!)}
                    data-x={Math.round(tipGeom.x + tipGeom.w / 2)}
                    data-y={Math.round(tipGeom.y + tipGeom.h / 2)}
                    style={{ left: `${Math.min(Math.max(0, tipGeom.x - 40), Math.max(0, L.width + L.gutter - 300))}px`, top: `${tipGeom.y + tipGeom.h + 6}px` }}
                >
                    <strong>{fmtTime(cur.scheduled_for, zone)}</strong>
                    <div>
                        <span class="swatch" style={{ background: colour(keys[shown]!) }} /> {words(keys[shown]!)}
                    </div>
                    {cur.dst && cur.dst !== "normal" && <div>{cur.dst === "dst_gap" ? "DST gap: this wall time does not exist" : "DST repeat: this wall time happens twice"}</div>}
                    {cur.calendar && <div data-testid="timeline-tip-calendar">{cur.calendar}</div>}
                    {(cur.attempts ?? 1) > 1 && <div>{cur.attempts} attempts (retried)</div>}
                    {run && (
                        <div>
                            run {run.status}, {run.started_at ? `duration ${runDuration(run)}` : "not started"}
                        </div>
                    )}
                    {cur.run_id && <div class="muted">Click or Enter opens the run</div>}
                </div>
            )}
        </div>
    );
}

/** The legend: every status and reason the API has, with the count in view. */
export function Legend({ counts }: { counts: Map<string, number> }): JSX.Element {
    const all = [...RUN_STATUSES.filter((s) => s !== "skipped"), "skipped", ...TIMELINE_REASONS];
    return (
        <ul class="legend" aria-label="Legend">
            {all.map((k) => (
                <li key={k} data-key={k} data-colour={colour(k)}>
                    <span class="swatch" style={{ background: colour(k) }} aria-hidden="true" />
                    {words(k)}
                    <span class="n">{counts.get(k) ?? 0}</span>
                </li>
            ))}
            <li data-key="dst-note">
                <svg width="12" height="12" aria-hidden="true">
                    <path d="M0 0 L10 0 L0 10 Z" fill="currentColor" />
                </svg>
                DST note (gap or repeat)
            </li>
            <li data-key="retried">
                <svg width="12" height="12" aria-hidden="true">
                    <circle cx="6" cy="6" r="4" fill="currentColor" />
                </svg>
                retried (more than one attempt)
            </li>
            <li data-key="now">
                <svg width="12" height="12" aria-hidden="true">
                    <rect x="5" y="0" width="2" height="12" fill="currentColor" />
                </svg>
                now
            </li>
        </ul>
    );
}

export function countKeys(entries: Entry[], now: number): Map<string, number> {
    const m = new Map<string, number>();
    for (const e of entries) {
        const k = cellKey(e.status, e.reason, new Date(e.scheduled_for).getTime() > now);
        m.set(k, (m.get(k) ?? 0) + 1);
    }
    return m;
}

export { duration };
