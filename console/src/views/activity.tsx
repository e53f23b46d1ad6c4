import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { acp, ApiError, can, problemText, unwrap, type Activity, type Schemas } from "../api";
import { activityZone, fmtTime, isoToWall, labelsText, policyOnResume, relative, runDuration, scheduledOf, triggerWords, wallToIso, zoneOf } from "../format";
import { Heatmap } from "../heatmap";
import { colour, words } from "../palette";
import { href, Link, navigate, useLoc } from "../router";
import { temporalScheduleUrl } from "../settings";
import { useStream } from "../stream";
import { countKeys, fetchTimeline, Legend, rateOf, Timeline, type Entry } from "../timeline";
import { Dialog, ErrorBox, Loading, Status, useAsync, useZoneMode, ZoneSwitch } from "../ui";

type Zoom = "hour" | "day" | "week" | "month";
const SPAN: Record<Zoom, number> = { hour: 3600_000, day: 86400_000, week: 7 * 86400_000, month: 30 * 86400_000 };

export function ActivityView({ id }: { id: string }): JSX.Element {
    const act = useAsync(async () => {
        const { data, error, response } = await acp().GET("/v1/activities/{id}", { params: { path: { id }, query: { include: "summary" } } });
        if (!data) throw new ApiError(problemText(error, response), response.status, error);
        return { a: data, etag: response.headers.get("etag") };
    }, [id]);
    const [tick, setTick] = useState(0);
    useStream(
        (c) => c.activity_id === id || c.subject === id,
        () => {
            act.reload();
            setTick((t) => t + 1);
        },
        400,
    );
    const a = act.data?.a;
    useEffect(() => {
        if (a) document.title = `${a.name} · ACP console`;
    }, [a?.name]);
    if (!a) {
        return act.error ? (
            <section>
                <h1>Activity</h1>
                <ErrorBox error={act.error} />
                <Link href={href("/activities")}>Back to the activities</Link>
            </section>
        ) : (
            <Loading what="the activity" />
        );
    }
    const scheduled = a.trigger.type !== "event";
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/activities")}>Activities</Link> /
            </nav>
            <div class="head">
                <h1>{a.name}</h1>
                <Actions a={a} reload={act.reload} />
            </div>
            <Facts a={a} />
            {scheduled ? (
                <TimelineSection a={a} tick={tick} />
            ) : (
                <p class="muted">An event-triggered activity has no nominal times; its runs are listed below.</p>
            )}
            <HeatmapSection a={a} tick={tick} />
            <div class="cols">
                <RecentRuns a={a} tick={tick} />
                <div>
                    <FlowSection a={a} />
                    <AlertsSection a={a} tick={tick} />
                </div>
            </div>
        </section>
    );
}

function Facts({ a }: { a: Activity }): JSX.Element {
    const mode = useZoneMode();
    const zone = zoneOf(mode, activityZone(a));
    const s = a.summary;
    return (
        <dl class="facts">
            <dt>Trigger</dt>
            <dd>{triggerWords(a.trigger)}</dd>
            {a.description && (
                <>
                    <dt>Description</dt>
                    <dd>{a.description}</dd>
                </>
            )}
            <dt>State</dt>
            <dd>
                {a.paused ? (
                    <span class="badge paused" data-testid="paused-badge">
                        Paused{a.pause_note ? `: ${a.pause_note}` : ""}
                    </span>
                ) : (
                    <span class="badge">Active</span>
                )}
                {!a.enabled && <span class="badge">Disabled</span>}
                <span class="badge sync" data-sync={a.schedule.sync_state}>
                    sync: {a.schedule.sync_state.replace("_", " ")}
                </span>
                {a.schedule.last_error && <span class="error small">{a.schedule.last_error}</span>}
            </dd>
            {labelsText(a.labels).length > 0 && (
                <>
                    <dt>Labels</dt>
                    <dd>
                        {labelsText(a.labels).map((l) => (
                            <Link class="chip" key={l} href={href("/activities", { label: l })}>
                                {l}
                            </Link>
                        ))}
                    </dd>
                </>
            )}
            <dt>Tasks</dt>
            <dd>{a.tasks.map((t, i) => `${i + 1}. ${t.name ? `${t.name} (${t.task_type})` : t.task_type}`).join("  ")}</dd>
            {a.schedule.next_fire_times.length > 0 && (
                <>
                    <dt>Next fires</dt>
                    <dd>
                        {a.schedule.next_fire_times.slice(0, 3).map((t) => (
                            <span key={t} class="badge">
                                <time dateTime={t}>{fmtTime(t, zone)}</time>
                            </span>
                        ))}
                        <span class="muted small">{zone}</span>
                    </dd>
                </>
            )}
            {s && (
                <>
                    <dt>Last 24 h</dt>
                    <dd>
                        {s.runs_24h} runs, {s.succeeded_24h} succeeded, {s.failed_24h} failed
                        {s.last_run && (
                            <>
                                {" "}
                                · last: <Link href={href(`/runs/${s.last_run.run_id}`)}>{s.last_run.status}</Link> {relative(s.last_run.created_at)}
                            </>
                        )}
                    </dd>
                </>
            )}
            <dt>ID</dt>
            <dd>
                <code>{a.id}</code> · version {a.version}
                {a.schedule.schedule_id && (
                    <>
                        {" "}
                        ·{" "}
                        <a href={temporalScheduleUrl(a.schedule.schedule_id)} target="_blank" rel="noreferrer">
                            schedule in the Temporal UI
                        </a>
                    </>
                )}
            </dd>
        </dl>
    );
}

function Actions({ a, reload }: { a: Activity; reload: () => void }): JSX.Element | null {
    const [dialog, setDialog] = useState<null | "pause" | "resume" | "backfill" | "delete">(null);
    const [flash, setFlash] = useState<{ text: string; kind: "ok" | "error"; run?: string } | null>(null);
    const [busy, setBusy] = useState(false);
    if (!can("write")) return null;
    const scheduled = a.trigger.type !== "event";
    const trigger = async () => {
        setBusy(true);
        try {
            const r = await unwrap(acp().POST("/v1/activities/{id}/trigger", { params: { path: { id: a.id } } }));
            setFlash({ text: `Triggered: run ${r.outcome}.`, kind: "ok", run: r.run_id });
        } catch (e) {
            setFlash({ text: (e as Error).message, kind: "error" });
        } finally {
            setBusy(false);
        }
    };
    const done = (text: string) => {
        setDialog(null);
        setFlash({ text, kind: "ok" });
        reload();
    };
    return (
        <div>
            <div class="actions" role="toolbar" aria-label="Actions">
                <button type="button" onClick={trigger} disabled={busy}>
                    Trigger now
                </button>
                {scheduled && !a.paused && (
                    <button type="button" onClick={() => setDialog("pause")}>
                        Pause
                    </button>
                )}
                {scheduled && a.paused && (
                    <button type="button" onClick={() => setDialog("resume")}>
                        Resume
                    </button>
                )}
                {scheduled && (
                    <button type="button" onClick={() => setDialog("backfill")}>
                        Backfill
                    </button>
                )}
                <Link class="button ghost" href={href(`/activities/${a.id}/edit`)}>
                    Edit
                </Link>
                <button type="button" class="ghost" onClick={() => setDialog("delete")}>
                    Delete
                </button>
            </div>
            {flash && (
                <div class={flash.kind === "ok" ? "flash" : "error"} role={flash.kind === "ok" ? "status" : "alert"}>
                    {flash.text} {flash.run && <Link href={href(`/runs/${flash.run}`)}>Open the run</Link>}
                </div>
            )}
            {dialog === "pause" && <PauseDialog a={a} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "resume" && <ResumeDialog a={a} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "backfill" && <BackfillDialog a={a} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "delete" && <DeleteDialog a={a} onClose={() => setDialog(null)} />}
        </div>
    );
}

function PauseDialog({ a, onClose, onDone }: { a: Activity; onClose: () => void; onDone: (t: string) => void }): JSX.Element {
    const [note, setNote] = useState("");
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    return (
        <Dialog title={`Pause ${a.name}`} onClose={onClose}>
            <form
                onSubmit={async (e) => {
                    e.preventDefault();
                    setBusy(true);
                    try {
                        await unwrap(acp().POST("/v1/activities/{id}/pause", { params: { path: { id: a.id } }, body: { note: note || null } }));
                        onDone("Paused.");
                    } catch (x) {
                        setErr((x as Error).message);
                    } finally {
                        setBusy(false);
                    }
                }}
            >
                <p>Fires while paused are dropped; resuming applies the misfire policy ({scheduledOf(a.trigger)?.misfire_policy ?? "skip"}) to them.</p>
                <label>
                    Note (why, until when)
                    <textarea name="note" rows={3} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} autoFocus />
                </label>
                <ErrorBox error={err ?? undefined} />
                <div class="actions">
                    <button type="submit" disabled={busy}>
                        Pause
                    </button>
                    <button type="button" class="ghost" onClick={onClose}>
                        Cancel
                    </button>
                </div>
            </form>
        </Dialog>
    );
}

type Missed = Schemas["MissedTimes"];

function MissedView({ m, zone }: { m: Missed; zone: string }): JSX.Element {
    return (
        <div data-testid="missed">
            <p>
                Paused from {fmtTime(m.from, zone)} to {fmtTime(m.until, zone)}: <strong>{m.total}</strong> missed times; {m.runs.length} run
                {m.skipped ? `, ${m.skipped} skipped` : ""}
                {m.pending ? `, ${m.pending} pending (Temporal unreachable)` : ""}.
            </p>
            {m.skipped_span && (
                <p>
                    Not run: {m.skipped_span.count} times from {fmtTime(m.skipped_span.first, zone)} to {fmtTime(m.skipped_span.last, zone)} ({words(m.skipped_span.reason)}).
                </p>
            )}
            {m.runs.length > 0 && <TimesTable times={m.runs} zone={zone} />}
            {m.in_flight.length > 0 && (
                <>
                    <p>Also due (fired around the resume):</p>
                    <TimesTable times={m.in_flight} zone={zone} />
                </>
            )}
        </div>
    );
}

function ResumeDialog({ a, onClose, onDone }: { a: Activity; onClose: () => void; onDone: (t: string) => void }): JSX.Element {
    const zone = activityZone(a);
    const [note, setNote] = useState("");
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const [result, setResult] = useState<Schemas["PauseResponse"] | null>(null);
    // What the misfire policy will do: a dry run when the API has one.
    const dry = useAsync(async () => {
        const body = { dry_run: true } as unknown as Schemas["PauseRequest"];
        const { data, response } = await acp().POST("/v1/activities/{id}/resume", { params: { path: { id: a.id } }, body });
        if (data && response.ok) return data.missed ?? null;
        return undefined; // no dry run in this API version
    }, [a.id]);
    return (
        <Dialog title={`Resume ${a.name}`} onClose={onClose} wide>
            {result ? (
                <div>
                    <p role="status">Resumed.</p>
                    {result.missed && <MissedView m={result.missed} zone={zone} />}
                    <div class="actions">
                        <button type="button" onClick={() => onDone("Resumed.")}>
                            Close
                        </button>
                    </div>
                </div>
            ) : (
                <form
                    onSubmit={async (e) => {
                        e.preventDefault();
                        setBusy(true);
                        try {
                            const r = await unwrap(acp().POST("/v1/activities/{id}/resume", { params: { path: { id: a.id } }, body: { note: note || null } }));
                            setResult(r);
                        } catch (x) {
                            setErr((x as Error).message);
                        } finally {
                            setBusy(false);
                        }
                    }}
                >
                    {a.pause_note && (
                        <p>
                            Paused with the note: <q>{a.pause_note}</q>
                        </p>
                    )}
                    <p data-testid="policy">{policyOnResume(a.trigger)}</p>
                    {dry.loading ? (
                        <Loading what="what the policy will do" />
                    ) : dry.data ? (
                        <MissedView m={dry.data} zone={zone} />
                    ) : dry.data === null ? (
                        <p>No time was missed.</p>
                    ) : (
                        <ResumeEstimate a={a} zone={zone} />
                    )}
                    <label>
                        Note (optional)
                        <input name="note" value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
                    </label>
                    <ErrorBox error={err ?? undefined} />
                    <div class="actions">
                        <button type="submit" disabled={busy}>
                            Resume
                        </button>
                        <button type="button" class="ghost" onClick={onClose}>
                            Cancel
                        </button>
                    </div>
                </form>
            )}
        </Dialog>
    );
}

/**
 * Without a dry run of resume: the times missed while paused, from the
 * timeline of the last 24 hours, and what the policy does with them.
 */
function ResumeEstimate({ a, zone }: { a: Activity; zone: string }): JSX.Element {
    const est = useAsync(async () => {
        const now = Date.now();
        const entries = await fetchTimeline(a.id, now - 86400_000, now, rateOf(a.trigger));
        const missed: Entry[] = [];
        for (let i = entries.length - 1; i >= 0 && entries[i]!.reason === "paused"; i--) missed.unshift(entries[i]!);
        return missed;
    }, [a.id]);
    if (est.loading && !est.data) return <Loading what="the missed times" />;
    const missed = est.data ?? [];
    const policy = scheduledOf(a.trigger)?.misfire_policy ?? "skip";
    const limit = scheduledOf(a.trigger)?.catchup_limit ?? 10;
    const first = missed[0];
    const last = missed[missed.length - 1];
    let what: string;
    if (missed.length === 0 || !first || !last) what = "No time was missed in the last 24 hours.";
    else if (policy === "skip") what = `${missed.length} missed times (${fmtTime(first.scheduled_for, zone)} – ${fmtTime(last.scheduled_for, zone)}) will not run.`;
    else if (policy === "catchup") {
        const n = Math.min(limit, missed.length);
        what = `The latest ${n} of ${missed.length} missed times will run${missed.length > n ? `; the ${missed.length - n} before them are skipped` : ""}.`;
    } else what = `One run for ${fmtTime(last.scheduled_for, zone)}, its window reaching back over the ${missed.length} missed times.`;
    const runs = policy === "catchup" ? missed.slice(-limit) : policy === "compress" && last ? [last] : [];
    return (
        <div data-testid="resume-estimate">
            <p>
                {what} <span class="muted small">(from the timeline: this service offers no dry run of resume, so the exact answer is shown after it ran)</span>
            </p>
            {runs.length > 0 && (
                <TimesTable times={runs.map((e) => ({ scheduled_for: e.scheduled_for, workflow_id: e.workflow_id, action: "backfilled" as const, reason: null }))} zone={zone} />
            )}
        </div>
    );
}

function TimesTable({ times, zone }: { times: Schemas["NominalTimeOutcome"][]; zone: string }): JSX.Element {
    return (
        <div class="scroll" tabIndex={0} role="region" aria-label="Nominal times and their actions">
            <table class="list compact" data-testid="times">
                <thead>
                    <tr>
                        <th scope="col">Nominal time ({zone})</th>
                        <th scope="col">Action</th>
                        <th scope="col">Reason</th>
                    </tr>
                </thead>
                <tbody>
                    {times.map((t) => (
                        <tr key={t.scheduled_for} data-action={t.action}>
                            <td>
                                <time dateTime={t.scheduled_for}>{fmtTime(t.scheduled_for, zone)}</time>
                            </td>
                            <td>{t.action}</td>
                            <td>{t.reason ? words(t.reason) : ""}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}

function BackfillDialog({ a, onClose, onDone }: { a: Activity; onClose: () => void; onDone: (t: string) => void }): JSX.Element {
    const zone = activityZone(a);
    const now = Date.now();
    const [start, setStart] = useState(isoToWall(new Date(now - 3600_000).toISOString(), zone));
    const [end, setEnd] = useState(isoToWall(new Date(now).toISOString(), zone));
    const [plan, setPlan] = useState<Schemas["BackfillResponse"] | null>(null);
    const [result, setResult] = useState<Schemas["BackfillResponse"] | null>(null);
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const call = async (dry: boolean) => {
        const s = wallToIso(start, zone);
        const e = wallToIso(end, zone);
        if (!s || !e) {
            setErr("Enter a start and an end.");
            return;
        }
        setBusy(true);
        setErr(null);
        try {
            const r = await unwrap(acp().POST("/v1/activities/{id}/backfill", { params: { path: { id: a.id } }, body: { start: s, end: e, dry_run: dry } }));
            if (dry) setPlan(r);
            else setResult(r);
        } catch (x) {
            setErr((x as Error).message);
        } finally {
            setBusy(false);
        }
    };
    const counts = (r: Schemas["BackfillResponse"]) => {
        const m = new Map<string, number>();
        for (const t of r.times) m.set(t.action, (m.get(t.action) ?? 0) + 1);
        return [...m].map(([k, v]) => `${v} ${k}`).join(", ") || "no time";
    };
    return (
        <Dialog title={`Backfill ${a.name}`} onClose={onClose} wide>
            {result ? (
                <div>
                    <p role="status">Done: {counts(result)}.</p>
                    {result.next_start && <p>The range was cut at 1000 times; continue from {fmtTime(result.next_start, zone)}.</p>}
                    <TimesTable times={result.times} zone={zone} />
                    <div class="actions">
                        <button type="button" onClick={() => onDone(`Backfill: ${counts(result)}.`)}>
                            Close
                        </button>
                    </div>
                </div>
            ) : (
                <form
                    onSubmit={(e) => {
                        e.preventDefault();
                        void call(true);
                    }}
                >
                    <p>
                        Runs every nominal time in [start, end) that has not run yet. Times are wall times in <strong>{zone}</strong>.
                    </p>
                    <div class="row">
                        <label>
                            Start
                            <input
                                type="datetime-local"
                                name="start"
                                value={start}
                                onInput={(e) => {
                                    setStart((e.target as HTMLInputElement).value);
                                    setPlan(null);
                                }}
                            />
                        </label>
                        <label>
                            End (exclusive)
                            <input
                                type="datetime-local"
                                name="end"
                                value={end}
                                onInput={(e) => {
                                    setEnd((e.target as HTMLInputElement).value);
                                    setPlan(null);
                                }}
                            />
                        </label>
                    </div>
                    <div class="actions">
                        <button type="submit" class={plan ? "ghost" : ""} disabled={busy}>
                            Dry run
                        </button>
                    </div>
                    <ErrorBox error={err ?? undefined} />
                    {plan && (
                        <div data-testid="backfill-plan">
                            <p>
                                Dry run: <strong>{counts(plan)}</strong>.{plan.next_start && ` Cut at 1000 times; the rest from ${fmtTime(plan.next_start, zone)}.`}
                            </p>
                            <TimesTable times={plan.times} zone={zone} />
                            <div class="actions">
                                <button type="button" disabled={busy || !plan.times.some((t) => t.action === "backfilled" || t.action === "pending")} onClick={() => void call(false)}>
                                    Confirm backfill
                                </button>
                                <button type="button" class="ghost" onClick={onClose}>
                                    Cancel
                                </button>
                            </div>
                        </div>
                    )}
                </form>
            )}
        </Dialog>
    );
}

function DeleteDialog({ a, onClose }: { a: Activity; onClose: () => void }): JSX.Element {
    const [err, setErr] = useState<string | null>(null);
    return (
        <Dialog title={`Delete ${a.name}?`} onClose={onClose}>
            <p>The schedule is removed; the run history stays readable.</p>
            <ErrorBox error={err ?? undefined} />
            <div class="actions">
                <button
                    type="button"
                    class="danger"
                    onClick={async () => {
                        try {
                            await unwrap(acp().DELETE("/v1/activities/{id}", { params: { path: { id: a.id }, header: {} } }));
                            navigate(href("/activities"));
                        } catch (x) {
                            setErr((x as Error).message);
                        }
                    }}
                >
                    Delete
                </button>
                <button type="button" class="ghost" onClick={onClose}>
                    Cancel
                </button>
            </div>
        </Dialog>
    );
}

function TimelineSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
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

/** What the window holds beyond colours: paused spans, DST notes, retried times. */
function WindowNotes({ entries, zone }: { entries: Entry[]; zone: string }): JSX.Element | null {
    const notes = useMemo(() => {
        const spans: { first: string; last: string; n: number }[] = [];
        let cur: { first: string; last: string; n: number } | null = null;
        const dst: Entry[] = [];
        let retried = 0;
        for (const e of entries) {
            if (e.reason === "paused") {
                if (cur) {
                    cur.last = e.scheduled_for;
                    cur.n++;
                } else spans.push((cur = { first: e.scheduled_for, last: e.scheduled_for, n: 1 }));
            } else cur = null;
            if (e.dst && e.dst !== "normal") dst.push(e);
            if ((e.attempts ?? 1) > 1) retried++;
        }
        return { spans, dst, retried };
    }, [entries]);
    if (notes.spans.length === 0 && notes.dst.length === 0 && notes.retried === 0) return null;
    return (
        <ul class="notes small" aria-label="Notes on this window" data-testid="window-notes">
            {notes.spans.slice(-5).map((p) => (
                <li key={p.first} data-note="paused">
                    Paused span: {fmtTime(p.first, zone)} – {fmtTime(p.last, zone)} ({p.n} {p.n === 1 ? "time" : "times"})
                </li>
            ))}
            {notes.dst.slice(0, 10).map((e) => (
                <li key={e.scheduled_for} data-note={e.dst ?? ""}>
                    {e.dst === "dst_gap" ? "DST gap" : "DST repeat"}: {fmtTime(e.scheduled_for, zone)}
                    {e.dst === "dst_gap" ? " (the wall time does not exist; shifted or skipped by the DST policy)" : " (the wall time happens twice; the DST policy says which run)"}
                    {e.reason ? ` — ${words(e.reason)}` : ""}
                </li>
            ))}
            {notes.retried > 0 && (
                <li data-note="retried">
                    {notes.retried} {notes.retried === 1 ? "time was" : "times were"} retried (more than one attempt).
                </li>
            )}
        </ul>
    );
}

/** The accessible fallback of the timeline: the times as a table (filterable, paged). */
function TimesList({ entries, zone, now }: { entries: Entry[]; zone: string; now: number }): JSX.Element {
    const [open, setOpen] = useState(false);
    const [only, setOnly] = useState("runs");
    const [page, setPage] = useState(0);
    const rows = useMemo(() => {
        if (!open) return [];
        return entries.filter((e) => (only === "all" ? true : only === "runs" ? e.run_id || e.reason : e.status === only || e.reason === only)).reverse();
    }, [entries, only, open]);
    const per = 100;
    return (
        <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
            <summary>The times as a table</summary>
            {open && (
                <div>
                    <label class="inline">
                        Show
                        <select value={only} onChange={(e) => (setOnly((e.target as HTMLSelectElement).value), setPage(0))}>
                            <option value="runs">times with a run or a reason</option>
                            <option value="all">every time</option>
                            <option value="succeeded">succeeded</option>
                            <option value="failed">failed</option>
                            <option value="skipped">skipped</option>
                            <option value="running">running</option>
                        </select>
                    </label>
                    <table class="list compact" data-testid="timeline-table">
                        <thead>
                            <tr>
                                <th scope="col">Nominal time ({zone})</th>
                                <th scope="col">Outcome</th>
                                <th scope="col">Attempts</th>
                                <th scope="col">DST</th>
                                <th scope="col">Run</th>
                            </tr>
                        </thead>
                        <tbody>
                            {rows.slice(page * per, page * per + per).map((e) => {
                                const k = e.status === "skipped" || e.status === "none" ? (e.reason ?? (new Date(e.scheduled_for).getTime() > now ? "not_yet_fired" : e.status)) : e.status;
                                return (
                                    <tr key={e.scheduled_for} data-key={k}>
                                        <td>
                                            <time dateTime={e.scheduled_for}>{fmtTime(e.scheduled_for, zone)}</time>
                                        </td>
                                        <td>
                                            <span class="swatch" style={{ background: colour(k) }} aria-hidden="true" /> {words(k)}
                                        </td>
                                        <td>{e.attempts ?? ""}</td>
                                        <td>{e.dst && e.dst !== "normal" ? e.dst.replace("_", " ") : ""}</td>
                                        <td>{e.run_id ? <Link href={href(`/runs/${e.run_id}`)}>run</Link> : ""}</td>
                                    </tr>
                                );
                            })}
                        </tbody>
                    </table>
                    <div class="pager">
                        {page > 0 && (
                            <button type="button" class="ghost" onClick={() => setPage(page - 1)}>
                                Newer
                            </button>
                        )}
                        {(page + 1) * per < rows.length && (
                            <button type="button" class="ghost" onClick={() => setPage(page + 1)}>
                                Older
                            </button>
                        )}
                        <span class="muted small">{rows.length} rows</span>
                    </div>
                </div>
            )}
        </details>
    );
}

function HeatmapSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const loc = useLoc();
    const year = Number(loc.query.get("year") ?? new Date().getUTCFullYear());
    const stats = useAsync(
        () =>
            unwrap(
                acp().GET("/v1/stats/runs", {
                    params: { query: { activity_id: a.id, bucket: "P1D", from: `${year}-01-01T00:00:00Z`, to: `${year + 1}-01-01T00:00:00Z` } },
                }),
            ),
        [a.id, year, Math.floor(tick / 5)],
    );
    const endAt = scheduledOf(a.trigger)?.end_at;
    const end = endAt ? new Date(endAt).getTime() : Infinity;
    const planned = (d: Date) => a.enabled && a.trigger.type !== "event" && d.getTime() < end;
    return (
        <section class="block" aria-labelledby="hm-title">
            <div class="head">
                <h2 id="hm-title">Runs per day, {year}</h2>
                <div class="seg" role="group" aria-label="Year">
                    <Link href={href(loc.path, { ...Object.fromEntries(loc.query), year: year - 1 })}>← {year - 1}</Link>
                    <Link href={href(loc.path, { ...Object.fromEntries(loc.query), year: year + 1 })}>{year + 1} →</Link>
                </div>
            </div>
            <ErrorBox error={stats.error} />
            <Heatmap year={year} buckets={stats.data?.buckets ?? []} planned={planned} activityId={a.id} />
        </section>
    );
}

function RecentRuns({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const mode = useZoneMode();
    const zone = zoneOf(mode, activityZone(a));
    const runs = useAsync(() => unwrap(acp().GET("/v1/activities/{id}/runs", { params: { path: { id: a.id }, query: { limit: 15 } } })), [a.id, tick]);
    return (
        <section class="block" aria-labelledby="runs-title">
            <div class="head">
                <h2 id="runs-title">Recent runs</h2>
                <Link href={href("/runs", { activity: a.id })}>All runs of this activity</Link>
            </div>
            <ErrorBox error={runs.error} />
            {runs.data && runs.data.items.length === 0 && <p class="muted">No run yet.</p>}
            {runs.data && runs.data.items.length > 0 && (
                <table class="list compact">
                    <thead>
                        <tr>
                            <th scope="col">Run</th>
                            <th scope="col">Status</th>
                            <th scope="col">Nominal time</th>
                            <th scope="col">Duration</th>
                        </tr>
                    </thead>
                    <tbody>
                        {runs.data.items.map((r) => (
                            <tr key={r.run_id}>
                                <td>
                                    <Link href={href(`/runs/${r.run_id}`)}>{r.trigger_type}</Link>
                                    {r.attempt > 1 && <span class="muted small"> attempt {r.attempt}</span>}
                                </td>
                                <td>
                                    <Status status={r.status} reason={r.skip_reason} />
                                </td>
                                <td>{r.scheduled_for ? fmtTime(r.scheduled_for, zone) : <span class="muted">{relative(r.created_at)}</span>}</td>
                                <td>{runDuration(r)}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
        </section>
    );
}

function FlowSection({ a }: { a: Activity }): JSX.Element | null {
    if (!a.flow && !a.flow_state) return null;
    const f = a.flow;
    const s = a.flow_state;
    return (
        <section class="block" aria-labelledby="flow-title">
            <h2 id="flow-title">Flow control</h2>
            <dl class="facts">
                {f?.concurrency && (
                    <>
                        <dt>Concurrency</dt>
                        <dd>
                            {f.concurrency.limit} per {f.concurrency.key ? <code>{f.concurrency.key}</code> : "activity"}, at the limit: {f.concurrency.on_limit ?? "queue"}
                        </dd>
                    </>
                )}
                {f?.rate_limit && (
                    <>
                        <dt>Rate limit</dt>
                        <dd>
                            {f.rate_limit.limit} per {f.rate_limit.period}
                            {f.rate_limit.key && (
                                <>
                                    {" "}
                                    per <code>{f.rate_limit.key}</code>
                                </>
                            )}
                            , at the limit: {f.rate_limit.on_limit ?? "queue"}
                        </dd>
                    </>
                )}
                {f?.debounce && (
                    <>
                        <dt>Debounce</dt>
                        <dd>
                            {f.debounce.period}
                            {f.debounce.key && (
                                <>
                                    {" "}
                                    per <code>{f.debounce.key}</code>
                                </>
                            )}
                        </dd>
                    </>
                )}
                {s && (
                    <>
                        <dt>Now</dt>
                        <dd>
                            {s.in_use} slots in use, {s.queued} queued
                        </dd>
                    </>
                )}
            </dl>
            {s && s.keys.length > 0 && (
                <table class="list compact">
                    <thead>
                        <tr>
                            <th scope="col">Key</th>
                            <th scope="col">In use</th>
                            <th scope="col">Queued</th>
                        </tr>
                    </thead>
                    <tbody>
                        {s.keys.map((k) => (
                            <tr key={k.key}>
                                <td data-label="Key">{k.key ? <code>{k.key}</code> : <span class="muted">(the activity)</span>}</td>
                                <td data-label="In use">{k.in_use}</td>
                                <td data-label="Queued">{k.queued}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
        </section>
    );
}

function AlertsSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const alerts = useAsync(() => unwrap(acp().GET("/v1/alerts", { params: { query: { activity_id: a.id, limit: 10 } } })), [a.id, tick]);
    const items = alerts.data?.items ?? [];
    return (
        <section class="block" aria-labelledby="alerts-title">
            <div class="head">
                <h2 id="alerts-title">Alerts</h2>
                <Link href={href("/alerts", { activity: a.id })}>All alerts of this activity</Link>
            </div>
            <ErrorBox error={alerts.error} />
            {items.length === 0 ? (
                <p class="muted">No alert.</p>
            ) : (
                <ul class="plain">
                    {items.map((al) => (
                        <li key={al.id}>
                            <span class={`badge ${al.state === "open" ? "paused" : ""}`}>{al.state}</span> <strong>{al.kind.replace("_", " ")}</strong>: {al.summary}{" "}
                            <span class="muted small">{relative(al.opened_at)}</span>
                        </li>
                    ))}
                </ul>
            )}
        </section>
    );
}


