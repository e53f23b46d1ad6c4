import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { acp, ApiError, can, unwrap, type Run, type Schemas } from "../api";
import { fmtTime, isoToWall, relative, runDuration, wallToIso, zoneOf } from "../format";
import { RUN_STATUSES } from "../palette";
import { href, Link, setQuery, useLoc } from "../router";
import { useStream } from "../stream";
import { Dialog, ErrorBox, Loading, Pager, Status, useAsync, useZoneMode } from "../ui";

type RunQuery = {
    status?: Schemas["RunStatus"];
    trigger_type?: Schemas["RunTrigger"];
    activity_id?: string;
    scheduled_after?: string;
    scheduled_before?: string;
};

function queryOf(q: URLSearchParams): RunQuery {
    const out: RunQuery = {};
    const s = q.get("status");
    if (s && (RUN_STATUSES as string[]).includes(s)) out.status = s as Schemas["RunStatus"];
    const t = q.get("trigger");
    if (t === "cron" || t === "interval" || t === "event" || t === "manual") out.trigger_type = t;
    const a = q.get("activity");
    if (a) out.activity_id = a;
    const f = q.get("from");
    if (f) out.scheduled_after = f;
    const to = q.get("to");
    if (to) out.scheduled_before = to;
    return out;
}

export function RunsView(): JSX.Element {
    const loc = useLoc();
    const rq = queryOf(loc.query);
    const cursor = loc.query.get("cursor") ?? "";
    const key = JSON.stringify(rq);
    const mode = useZoneMode();
    const zone = zoneOf(mode === "activity" ? "local" : mode);
    useEffect(() => {
        document.title = "Runs · ACP console";
    }, []);
    const runs = useAsync(() => unwrap(acp().GET("/v1/runs", { params: { query: { ...rq, limit: 50, ...(cursor ? { cursor } : {}) } } })), [key, cursor]);
    const acts = useAsync(() => unwrap(acp().GET("/v1/activities", { params: { query: { limit: 200 } } })), []);
    const names = new Map((acts.data?.items ?? []).map((a) => [a.id, a.name]));
    useStream((c) => c.kind.startsWith("run.") && (!rq.activity_id || c.activity_id === rq.activity_id), runs.reload, 500);
    const [bulk, setBulk] = useState<null | "retry" | "cancel">(null);
    const items = runs.data?.items ?? [];
    return (
        <section>
            <div class="head">
                <h1>Runs</h1>
                {can("write") && (
                    <div class="actions" role="toolbar" aria-label="Bulk actions on the filter">
                        <button type="button" onClick={() => setBulk("retry")}>
                            Retry matching…
                        </button>
                        <button type="button" class="ghost" onClick={() => setBulk("cancel")}>
                            Cancel matching…
                        </button>
                    </div>
                )}
            </div>
            <RunFilters rq={rq} activities={acts.data?.items ?? []} zone={zone} />
            <ErrorBox error={runs.error} />
            {runs.data === undefined && runs.loading ? (
                <Loading what="runs" />
            ) : items.length === 0 ? (
                <p class="empty">No run matches.</p>
            ) : (
                <RunTable runs={items} names={names} zone={zone} />
            )}
            <Pager next={runs.data?.next_cursor} />
            {bulk && <BulkDialog kind={bulk} rq={rq} names={names} onClose={() => setBulk(null)} onDone={runs.reload} />}
        </section>
    );
}

export function RunTable({ runs, names, zone }: { runs: Run[]; names: Map<string, string>; zone: string }): JSX.Element {
    return (
        <table class="list runs">
            <caption class="sr-only">Runs</caption>
            <thead>
                <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Activity</th>
                    <th scope="col">Status</th>
                    <th scope="col">Trigger</th>
                    <th scope="col">Nominal time</th>
                    <th scope="col">Started</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Tasks</th>
                </tr>
            </thead>
            <tbody>
                {runs.map((r) => (
                    <tr key={r.run_id} data-run={r.run_id} data-status={r.status}>
                        <td data-label="Run">
                            <Link href={href(`/runs/${r.run_id}`)}>
                                <code>{r.run_id.slice(0, 8)}</code>
                            </Link>
                            {r.attempt > 1 && <span class="muted small"> attempt {r.attempt}</span>}
                        </td>
                        <td data-label="Activity">
                            <Link href={href(`/activities/${r.activity_id}`)}>{names.get(r.activity_id) ?? r.activity_id.slice(0, 8)}</Link>
                        </td>
                        <td data-label="Status">
                            <Status status={r.status} reason={r.skip_reason} />
                            {r.error && <div class="small muted">{r.error.slice(0, 120)}</div>}
                        </td>
                        <td data-label="Trigger">{r.trigger_type}</td>
                        <td data-label="Nominal time">{r.scheduled_for ? fmtTime(r.scheduled_for, zone, "full") : r.event_id ? <code>{r.event_id}</code> : "—"}</td>
                        <td data-label="Started">{r.started_at ? <span title={fmtTime(r.started_at, zone)}>{relative(r.started_at)}</span> : "—"}</td>
                        <td data-label="Duration">{runDuration(r)}</td>
                        <td data-label="Tasks">
                            {r.tasks_succeeded}/{r.tasks_total}
                            {r.tasks_failed > 0 && <span class="alert-count"> {r.tasks_failed} failed</span>}
                        </td>
                    </tr>
                ))}
            </tbody>
        </table>
    );
}

function RunFilters({ rq, activities, zone }: { rq: RunQuery; activities: Schemas["ActivityResponse"][]; zone: string }): JSX.Element {
    const [from, setFrom] = useState(rq.scheduled_after ? isoToWall(rq.scheduled_after, zone) : "");
    const [to, setTo] = useState(rq.scheduled_before ? isoToWall(rq.scheduled_before, zone) : "");
    useEffect(() => setFrom(rq.scheduled_after ? isoToWall(rq.scheduled_after, zone) : ""), [rq.scheduled_after, zone]);
    useEffect(() => setTo(rq.scheduled_before ? isoToWall(rq.scheduled_before, zone) : ""), [rq.scheduled_before, zone]);
    const any = Object.keys(rq).length > 0;
    return (
        <form
            class="filters"
            role="search"
            aria-label="Filter runs"
            onSubmit={(e) => {
                e.preventDefault();
                setQuery({ from: from ? wallToIso(from, zone) : null, to: to ? wallToIso(to, zone) : null, cursor: null });
            }}
        >
            <label>
                Status
                <select name="status" value={rq.status ?? ""} onChange={(e) => setQuery({ status: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {RUN_STATUSES.map((s) => (
                        <option key={s} value={s}>
                            {s.replace("_", " ")}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Trigger
                <select name="trigger" value={rq.trigger_type ?? ""} onChange={(e) => setQuery({ trigger: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {["cron", "interval", "event", "manual"].map((s) => (
                        <option key={s} value={s}>
                            {s}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Activity
                <select name="activity" value={rq.activity_id ?? ""} onChange={(e) => setQuery({ activity: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {rq.activity_id && !activities.some((a) => a.id === rq.activity_id) && <option value={rq.activity_id}>{rq.activity_id}</option>}
                    {activities.map((a) => (
                        <option key={a.id} value={a.id}>
                            {a.name}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Nominal time from ({zone})
                <input type="datetime-local" name="from" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
            </label>
            <label>
                to
                <input type="datetime-local" name="to" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit">Apply</button>
            {any && (
                <Link class="button ghost" href={href("/runs")}>
                    Clear
                </Link>
            )}
        </form>
    );
}

const MAX_COUNT = 1000;

/** Bulk retry/cancel of the filter: counts the matching runs first, then asks each activity's bulk endpoint. */
function BulkDialog({ kind, rq, names, onClose, onDone }: { kind: "retry" | "cancel"; rq: RunQuery; names: Map<string, string>; onClose: () => void; onDone: () => void }): JSX.Element {
    const wanted: Schemas["RunStatus"][] = kind === "retry" ? ["failed", "cancelled"] : ["running", "queued"];
    const filter = {
        ...(rq.status ? { status: rq.status } : {}),
        ...(rq.trigger_type ? { trigger_type: rq.trigger_type } : {}),
        ...(rq.scheduled_after ? { scheduled_after: rq.scheduled_after } : {}),
        ...(rq.scheduled_before ? { scheduled_before: rq.scheduled_before } : {}),
    };
    const bulk = (id: string, dry: boolean) => {
        // `dry_run` only when asked: a service without it refuses the field.
        const d = dry ? { dry_run: true } : {};
        return kind === "retry"
            ? unwrap(acp().POST("/v1/activities/{id}/runs/retry", { params: { path: { id } }, body: { ...filter, ...d } }))
            : unwrap(acp().POST("/v1/activities/{id}/runs/cancel", { params: { path: { id } }, body: { ...filter, force: false, reason: reason || null, ...d } }));
    };
    const count = useAsync(async () => {
        // The runs the list names for this filter: which activities, and a count
        // when the service has no dry run of bulk actions.
        const listed = new Map<string, number>();
        const listedSample: Pick<Schemas["BulkRunResult"], "run_id" | "scheduled_for" | "workflow_id">[] = [];
        let seen = 0;
        for (const status of rq.status ? [rq.status] : wanted) {
            if (!wanted.includes(status)) continue;
            let cursor: string | undefined;
            do {
                const page: Schemas["Page_RunResponse"] = await unwrap(acp().GET("/v1/runs", { params: { query: { ...rq, status, limit: 200, ...(cursor ? { cursor } : {}) } } }));
                for (const r of page.items) {
                    listed.set(r.activity_id, (listed.get(r.activity_id) ?? 0) + 1);
                    if (listedSample.length < 10) listedSample.push(r);
                }
                seen += page.items.length;
                cursor = page.next_cursor ?? undefined;
            } while (cursor && seen < MAX_COUNT);
        }
        // Each activity's dry run names exactly the runs the request would act on.
        const byActivity = new Map<string, number>();
        const sample: Pick<Schemas["BulkRunResult"], "run_id" | "scheduled_for" | "workflow_id">[] = [];
        let total = 0;
        let capped = false;
        try {
            for (const id of rq.activity_id ? [rq.activity_id] : listed.keys()) {
                const r = await bulk(id, true);
                if (r.results.length === 0) continue;
                byActivity.set(id, r.results.length);
                total += r.results.length;
                capped ||= r.more;
                sample.push(...r.results.slice(0, Math.max(0, 10 - sample.length)));
            }
        } catch (e) {
            // A service without the dry run refuses the field: count from the list instead.
            if (!(e instanceof ApiError && e.status === 400)) throw e;
            return { byActivity: listed, total: seen, capped: seen >= MAX_COUNT, sample: listedSample, exact: false };
        }
        return { byActivity, total, capped, sample, exact: true };
    }, []);
    const [busy, setBusy] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const [result, setResult] = useState<Map<string, number> | null>(null);
    const [reason, setReason] = useState("");
    const run = async () => {
        if (!count.data) return;
        setBusy(true);
        setErr(null);
        const outcomes = new Map<string, number>();
        try {
            for (const id of count.data.byActivity.keys()) {
                for (let round = 0; round < 20; round++) {
                    const r = await bulk(id, false);
                    for (const x of r.results) outcomes.set(x.outcome, (outcomes.get(x.outcome) ?? 0) + 1);
                    if (!r.more) break;
                }
            }
            setResult(outcomes);
            onDone();
        } catch (e) {
            setErr((e as Error).message);
        } finally {
            setBusy(false);
        }
    };
    const verb = kind === "retry" ? "Retry" : "Cancel";
    return (
        <Dialog title={`${verb} the runs of this filter`} onClose={onClose}>
            {count.loading ? (
                <Loading what="the matching runs" />
            ) : count.error ? (
                <ErrorBox error={count.error} />
            ) : result ? (
                <div>
                    <p role="status" data-testid="bulk-result">
                        Done: {[...result].map(([k, v]) => `${v} ${k.replace("_", " ")}`).join(", ") || "nothing matched"}.
                    </p>
                    <button type="button" onClick={onClose}>
                        Close
                    </button>
                </div>
            ) : count.data ? (
                <div>
                    <p data-testid="bulk-count">
                        <strong>
                            {count.data.total}
                            {count.data.capped ? "+" : ""}
                        </strong>{" "}
                        {kind === "retry" ? "failed or cancelled" : "running or queued"} runs match
                        {count.data.byActivity.size > 0 && ` in ${count.data.byActivity.size} ${count.data.byActivity.size === 1 ? "activity" : "activities"}`}.
                    </p>
                    {count.data.byActivity.size > 0 && (
                        <ul>
                            {[...count.data.byActivity].map(([id, n]) => (
                                <li key={id}>
                                    {names.get(id) ?? id}: {n}
                                </li>
                            ))}
                        </ul>
                    )}
                    {count.data.sample.length > 0 && (
                        <ul class="small" data-testid="bulk-sample">
                            {count.data.sample.map((r) => (
                                <li key={r.run_id}>
                                    <Link href={href(`/runs/${r.run_id}`)}>
                                        <code>{r.run_id.slice(0, 8)}</code>
                                    </Link>{" "}
                                    {r.scheduled_for ? fmtTime(r.scheduled_for, zoneOf("local")) : r.workflow_id}
                                </li>
                            ))}
                            {count.data.total > count.data.sample.length && <li>…</li>}
                        </ul>
                    )}
                    {count.data.capped && <p class="small">More than one request's limit match: the action repeats until none is left.</p>}
                    {kind === "cancel" && (
                        <label>
                            Reason (optional)
                            <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
                        </label>
                    )}
                    <ErrorBox error={err ?? undefined} />
                    <div class="actions">
                        <button type="button" class={kind === "cancel" ? "danger" : ""} disabled={busy || count.data.total === 0} onClick={() => void run()}>
                            {verb} {count.data.total} runs
                        </button>
                        <button type="button" class="ghost" onClick={onClose}>
                            Close
                        </button>
                    </div>
                </div>
            ) : null}
        </Dialog>
    );
}
