import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { acp, can, unwrap, type Activity, type Schemas } from "../api";
import { activityZone, fmtTime, labelsText, relative, triggerWords, zoneOf } from "../format";
import { colour } from "../palette";
import { href, Link, setQuery, useLoc } from "../router";
import { useStream } from "../stream";
import { ErrorBox, Loading, Pager, Status, useAsync, useZoneMode, ZoneSwitch } from "../ui";

type Buckets = Schemas["RunStatsBucket"][];

export function ActivitiesView(): JSX.Element {
    const loc = useLoc();
    const q = loc.query;
    const text = q.get("q") ?? "";
    const label = q.get("label") ?? "";
    const kind = q.get("kind") ?? "";
    const cursor = q.get("cursor") ?? "";
    const mode = useZoneMode();
    useEffect(() => {
        document.title = "Activities · ACP console";
    }, []);
    const list = useAsync(
        () =>
            unwrap(
                acp().GET("/v1/activities", {
                    params: {
                        query: {
                            include: "summary",
                            limit: 50,
                            ...(text ? { q: text } : {}),
                            ...(label ? { label } : {}),
                            ...(kind ? { trigger_type: kind } : {}),
                            ...(cursor ? { cursor } : {}),
                        },
                    },
                }),
            ),
        [text, label, kind, cursor],
    );
    const [tick, setTick] = useState(0);
    useStream(
        (c) => c.kind.startsWith("activity.") || c.kind.startsWith("run.") || c.kind.startsWith("alert."),
        () => {
            list.reload();
            setTick((t) => t + 1);
        },
        500,
    );
    const items = list.data?.items ?? [];
    return (
        <section>
            <div class="head">
                <h1>Activities</h1>
                {can("write") && (
                    <Link class="button" href={href("/activities/new")}>
                        New activity
                    </Link>
                )}
            </div>
            <Filters text={text} label={label} kind={kind} />
            <div class="toolbar">
                <ZoneSwitch />
                <span class="muted" aria-live="polite">
                    {list.loading ? "Refreshing…" : `${items.length} shown`}
                </span>
            </div>
            <ErrorBox error={list.error} />
            {list.data === undefined && list.loading ? (
                <Loading what="activities" />
            ) : items.length === 0 ? (
                <p class="empty">No activity matches. {can("write") && <Link href={href("/activities/new")}>Create one.</Link>}</p>
            ) : (
                <table class="list activities">
                    <caption class="sr-only">Activities</caption>
                    <thead>
                        <tr>
                            <th scope="col">Activity</th>
                            <th scope="col">Trigger</th>
                            <th scope="col">Next fire</th>
                            <th scope="col">Last run</th>
                            <th scope="col">Last 24 h</th>
                            <th scope="col">Alerts</th>
                            <th scope="col">State</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((a) => (
                            <Row a={a} key={a.id} zone={zoneOf(mode, activityZone(a))} tick={tick} />
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={list.data?.next_cursor} />
        </section>
    );
}

function Filters({ text, label, kind }: { text: string; label: string; kind: string }): JSX.Element {
    const [t, setT] = useState(text);
    const [l, setL] = useState(label);
    useEffect(() => setT(text), [text]);
    useEffect(() => setL(label), [label]);
    useEffect(() => {
        if (t === text) return;
        const h = window.setTimeout(() => setQuery({ q: t, cursor: null }, true), 350);
        return () => window.clearTimeout(h);
    }, [t]);
    return (
        <form
            class="filters"
            role="search"
            aria-label="Filter activities"
            onSubmit={(e) => {
                e.preventDefault();
                setQuery({ q: t, label: l, cursor: null });
            }}
        >
            <label>
                Text
                <input type="search" name="q" value={t} placeholder="name or description" onInput={(e) => setT((e.target as HTMLInputElement).value)} />
            </label>
            <label>
                Label
                <input
                    type="text"
                    name="label"
                    value={l}
                    placeholder="key=value"
                    onInput={(e) => setL((e.target as HTMLInputElement).value)}
                    onChange={(e) => setQuery({ label: (e.target as HTMLInputElement).value, cursor: null })}
                />
            </label>
            <label>
                Trigger
                <select name="kind" value={kind} onChange={(e) => setQuery({ kind: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    <option value="cron">cron</option>
                    <option value="interval">interval</option>
                    <option value="event">event</option>
                </select>
            </label>
            <button type="submit">Filter</button>
            {(text || label || kind) && (
                <Link href={href("/activities")} class="button ghost">
                    Clear
                </Link>
            )}
        </form>
    );
}

function Row({ a, zone, tick }: { a: Activity; zone: string; tick: number }): JSX.Element {
    const s = a.summary;
    const next = s?.next_fire ?? a.schedule.next_fire_times[0] ?? null;
    return (
        <tr data-activity={a.id}>
            <td data-label="Activity">
                <Link href={href(`/activities/${a.id}`)} class="strong">
                    {a.name}
                </Link>
                {a.description && <div class="muted small">{a.description}</div>}
                <div class="labels">
                    {labelsText(a.labels).map((l) => (
                        <Link class="chip" key={l} href={href("/activities", { label: l })}>
                            {l}
                        </Link>
                    ))}
                </div>
            </td>
            <td data-label="Trigger" class="trigger">
                {triggerWords(a.trigger)}
            </td>
            <td data-label="Next fire">
                {next ? (
                    <>
                        <time dateTime={next}>{fmtTime(next, zone, "short")}</time> <span class="muted small">{zone}</span>
                        <div class="muted small">{relative(next)}</div>
                    </>
                ) : (
                    <span class="muted">—</span>
                )}
            </td>
            <td data-label="Last run">
                {s?.last_run ? (
                    <Link href={href(`/runs/${s.last_run.run_id}`)}>
                        <Status status={s.last_run.status} />
                        <div class="muted small">{relative(s.last_run.finished_at ?? s.last_run.created_at)}</div>
                    </Link>
                ) : (
                    <span class="muted">never</span>
                )}
            </td>
            <td data-label="Last 24 h">
                <Spark id={a.id} tick={`${s?.last_run?.run_id ?? ""}:${s?.last_run?.status ?? ""}:${Math.floor(tick / 20)}`} />
                {s && (
                    <div class="muted small">
                        {s.runs_24h} runs{s.success_rate_24h != null ? `, ${Math.round(s.success_rate_24h * 100)} % ok` : ""}
                        {s.failed_24h ? `, ${s.failed_24h} failed` : ""}
                    </div>
                )}
            </td>
            <td data-label="Alerts">
                {s && s.open_alerts > 0 ? (
                    <Link class="alert-count" href={href("/alerts", { activity: a.id, state: "open" })}>
                        {s.open_alerts} open
                    </Link>
                ) : (
                    <span class="muted">0</span>
                )}
            </td>
            <td data-label="State">
                {a.paused && (
                    <span class="badge paused" title={a.pause_note ?? ""}>
                        Paused{a.pause_note ? `: ${a.pause_note}` : ""}
                    </span>
                )}
                {!a.enabled && <span class="badge">Disabled</span>}
                <span class="badge sync" data-sync={a.schedule.sync_state} title={a.schedule.last_error ?? ""}>
                    {a.schedule.sync_state.replace("_", " ")}
                </span>
            </td>
        </tr>
    );
}

/** 24 hourly bars of the activity's runs, stacked by outcome. */
function Spark({ id, tick }: { id: string; tick: string }): JSX.Element {
    const stats = useAsync(() => unwrap(acp().GET("/v1/stats/runs", { params: { query: { activity_id: id, bucket: "PT1H" } } })), [id, tick]);
    return <Sparkline buckets={stats.data?.buckets ?? []} />;
}

export function Sparkline({ buckets, width = 120, height = 28 }: { buckets: Buckets; width?: number; height?: number }): JSX.Element {
    const n = Math.max(buckets.length, 24);
    const max = Math.max(1, ...buckets.map((b) => b.total));
    const bw = width / n;
    const order: (keyof Schemas["RunStatusCounts"])[] = ["succeeded", "failed", "timed_out", "cancelled", "skipped", "running", "queued"];
    const rects: JSX.Element[] = [];
    let total = 0;
    let failed = 0;
    buckets.forEach((b, i) => {
        let y = height;
        total += b.total;
        failed += b.counts.failed + b.counts.timed_out;
        for (const k of order) {
            const v = b.counts[k];
            if (!v) continue;
            const h = (v / max) * (height - 2);
            y -= h;
            rects.push(<rect key={`${i}${k}`} x={i * bw + 0.5} y={y} width={Math.max(1, bw - 1)} height={h} fill={colour(k)} />);
        }
    });
    return (
        <svg class="spark" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Last 24 hours: ${total} runs, ${failed} failed`}>
            <line x1="0" x2={width} y1={height - 0.5} y2={height - 0.5} class="axis" />
            {rects}
        </svg>
    );
}
