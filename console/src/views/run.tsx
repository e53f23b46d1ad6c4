import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { acp, can, unwrap, type Run } from "../api";
import { fmtTime, relative, runDuration, zoneOf } from "../format";
import { href, Link } from "../router";
import { temporalWorkflowUrl } from "../settings";
import { useStream } from "../stream";
import { Dialog, ErrorBox, Loading, Status, useAsync, useZoneMode, ZoneSwitch } from "../ui";

export function RunView({ id }: { id: string }): JSX.Element {
    const run = useAsync(() => unwrap(acp().GET("/v1/runs/{run_id}", { params: { path: { run_id: id } } })), [id]);
    const r = run.data;
    const act = useAsync(async () => (r ? unwrap(acp().GET("/v1/activities/{id}", { params: { path: { id: r.activity_id } } })).catch(() => null) : null), [r?.activity_id]);
    useStream((c) => c.subject === id || (c.kind.startsWith("run.") && (c.data as { run_id?: string })?.run_id === id), run.reload, 250);
    const mode = useZoneMode();
    const actZone = act.data?.trigger.type === "cron" ? act.data.trigger.timezone || "UTC" : "UTC";
    const zone = zoneOf(mode, actZone);
    useEffect(() => {
        document.title = `Run ${id.slice(0, 8)} · ACP console`;
    }, [id]);
    if (!r) return run.error ? <ErrorBox error={run.error} /> : <Loading what="the run" />;
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/runs")}>Runs</Link> / {act.data ? <Link href={href(`/activities/${r.activity_id}`)}>{act.data.name}</Link> : <code>{r.activity_id}</code>} /
            </nav>
            <div class="head">
                <h1>
                    Run <code>{r.run_id.slice(0, 8)}</code> <Status status={r.status} reason={r.skip_reason} />
                </h1>
                <RunActions r={r} reload={run.reload} />
            </div>
            <div class="toolbar">
                <ZoneSwitch zoneLabel={actZone} />
            </div>
            <dl class="facts">
                <dt>Activity</dt>
                <dd>
                    <Link href={href(`/activities/${r.activity_id}`)}>{act.data?.name ?? r.activity_id}</Link> (definition version {r.definition_version ?? "?"})
                </dd>
                <dt>Contract workflow ID</dt>
                <dd>
                    <code>{r.workflow_id}</code>{" "}
                    <a href={temporalWorkflowUrl(r.workflow_id)} target="_blank" rel="noreferrer">
                        in the Temporal UI
                    </a>
                </dd>
                <dt>Trigger</dt>
                <dd>
                    {r.trigger_type}
                    {r.event_id && (
                        <>
                            {" "}
                            · event <Link href={href(`/events/${encodeURIComponent(r.event_id)}`)}>{r.event_id}</Link>
                        </>
                    )}
                </dd>
                {r.scheduled_for && (
                    <>
                        <dt>Nominal time</dt>
                        <dd>{fmtTime(r.scheduled_for, zone)}</dd>
                    </>
                )}
                {(r.window_start || r.window_end) && (
                    <>
                        <dt>Window</dt>
                        <dd>
                            [{fmtTime(r.window_start, zone)}, {fmtTime(r.window_end, zone)})
                        </dd>
                    </>
                )}
                <dt>Created</dt>
                <dd>
                    {fmtTime(r.created_at, zone)} <span class="muted">({relative(r.created_at)})</span>
                </dd>
                <dt>Started / finished</dt>
                <dd>
                    {fmtTime(r.started_at, zone)} → {fmtTime(r.finished_at, zone)} · {runDuration(r)}
                </dd>
                <dt>Attempt</dt>
                <dd>{r.attempt}</dd>
                <dt>Tasks</dt>
                <dd>
                    {r.tasks_succeeded} of {r.tasks_total} succeeded{r.tasks_failed ? `, ${r.tasks_failed} failed` : ""}
                </dd>
                {r.flow && (
                    <>
                        <dt>Flow</dt>
                        <dd>
                            queued under key <code>{r.flow.key}</code> at {fmtTime(r.flow.queued_at, zone)}
                        </dd>
                    </>
                )}
                {r.cancellation && (
                    <>
                        <dt>Cancellation</dt>
                        <dd>
                            {r.cancellation.forced ? "terminated" : "cancel"} requested {fmtTime(r.cancellation.requested_at, zone)}
                            {r.cancellation.reason ? `: ${r.cancellation.reason}` : ""}
                            {r.cancellation.requested_by && (
                                <span class="muted">
                                    {" "}
                                    by key <code>{r.cancellation.requested_by}</code>
                                </span>
                            )}
                        </dd>
                    </>
                )}
            </dl>
            {r.error && (
                <div class="error" data-testid="run-error">
                    <strong>Error:</strong> {r.error}
                </div>
            )}
            <h2>Tasks</h2>
            {(r.tasks ?? []).length === 0 ? (
                <p class="muted">No task started.</p>
            ) : (
                <table class="list tasks">
                    <thead>
                        <tr>
                            <th scope="col">#</th>
                            <th scope="col">Task</th>
                            <th scope="col">Status</th>
                            <th scope="col">Attempts</th>
                            <th scope="col">Duration</th>
                            <th scope="col">Workflow</th>
                        </tr>
                    </thead>
                    <tbody>
                        {(r.tasks ?? []).map((t) => (
                            <tr key={t.id}>
                                <td data-label="#">{t.index + 1}</td>
                                <td data-label="Task">
                                    {t.name ? (
                                        <>
                                            {t.name} <span class="muted">({t.task_type})</span>
                                        </>
                                    ) : (
                                        t.task_type
                                    )}
                                </td>
                                <td data-label="Status">
                                    <Status status={t.status} />
                                    {t.error && <div class="small">{t.error}</div>}
                                    {t.previous_attempts.length > 0 && (
                                        <details>
                                            <summary class="small">Earlier run attempts ({t.previous_attempts.length})</summary>
                                            <ul class="small">
                                                {t.previous_attempts.map((p) => (
                                                    <li key={p.run_attempt}>
                                                        run attempt {p.run_attempt}: {p.status}, {p.attempts} tries, {runDuration(p)}
                                                        {p.error ? ` — ${p.error}` : ""}
                                                    </li>
                                                ))}
                                            </ul>
                                        </details>
                                    )}
                                </td>
                                <td data-label="Attempts">
                                    {t.attempts} (run attempt {t.run_attempt})
                                </td>
                                <td data-label="Duration">{runDuration(t)}</td>
                                <td data-label="Workflow">
                                    <code>{t.workflow_id}</code>{" "}
                                    <a href={temporalWorkflowUrl(t.workflow_id)} target="_blank" rel="noreferrer" aria-label={`Task ${t.index + 1} in the Temporal UI`}>
                                        Temporal UI
                                    </a>
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            {(r.tasks ?? []).some((t) => t.output && Object.keys(t.output).length > 0) && (
                <details>
                    <summary>Task outputs</summary>
                    {(r.tasks ?? []).map((t) => (
                        <div key={t.id}>
                            <h3>
                                {t.index + 1}. {t.name ?? t.task_type}
                            </h3>
                            <pre>{JSON.stringify(t.output, null, 2)}</pre>
                        </div>
                    ))}
                </details>
            )}
            {(r.attempts ?? []).length > 0 && (
                <>
                    <h2>Attempts</h2>
                    <table class="list compact">
                        <thead>
                            <tr>
                                <th scope="col">Attempt</th>
                                <th scope="col">Status</th>
                                <th scope="col">Requested</th>
                                <th scope="col">Finished</th>
                                <th scope="col">Error</th>
                            </tr>
                        </thead>
                        <tbody>
                            {(r.attempts ?? []).map((x) => (
                                <tr key={x.attempt}>
                                    <td>{x.attempt}</td>
                                    <td>
                                        <Status status={x.status} />
                                    </td>
                                    <td>
                                        {fmtTime(x.requested_at, zone)}
                                        {x.requested_by && <div class="muted small">by key {x.requested_by.slice(0, 8)}</div>}
                                    </td>
                                    <td>{fmtTime(x.finished_at, zone)}</td>
                                    <td>{x.error ?? ""}</td>
                                </tr>
                            ))}
                        </tbody>
                    </table>
                </>
            )}
        </section>
    );
}

function RunActions({ r, reload }: { r: Run; reload: () => void }): JSX.Element | null {
    const [dialog, setDialog] = useState<null | "cancel">(null);
    const [err, setErr] = useState<string | null>(null);
    const [msg, setMsg] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    if (!can("write")) return null;
    const canCancel = r.status === "running" || r.status === "queued";
    const canRetry = r.status === "failed" || r.status === "cancelled" || r.status === "timed_out";
    return (
        <div>
            <div class="actions" role="toolbar" aria-label="Run actions">
                {canCancel && (
                    <button type="button" class="danger" onClick={() => setDialog("cancel")}>
                        Cancel run
                    </button>
                )}
                {canRetry && (
                    <button
                        type="button"
                        disabled={busy}
                        onClick={async () => {
                            setBusy(true);
                            setErr(null);
                            try {
                                const x = await unwrap(acp().POST("/v1/runs/{run_id}/retry", { params: { path: { run_id: r.run_id } } }));
                                setMsg(`Retry started: attempt ${x.attempt}.`);
                                reload();
                            } catch (e) {
                                setErr((e as Error).message);
                            } finally {
                                setBusy(false);
                            }
                        }}
                    >
                        Retry run
                    </button>
                )}
            </div>
            {msg && (
                <p class="flash" role="status">
                    {msg}
                </p>
            )}
            <ErrorBox error={err ?? undefined} />
            {dialog === "cancel" && <CancelDialog r={r} onClose={() => setDialog(null)} onDone={(m) => (setDialog(null), setMsg(m), reload())} />}
        </div>
    );
}

function CancelDialog({ r, onClose, onDone }: { r: Run; onClose: () => void; onDone: (m: string) => void }): JSX.Element {
    const [reason, setReason] = useState("");
    const [force, setForce] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    return (
        <Dialog title="Cancel this run?" onClose={onClose}>
            <form
                onSubmit={async (e) => {
                    e.preventDefault();
                    setBusy(true);
                    try {
                        const x = await unwrap(acp().POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: r.run_id } }, body: { reason: reason || null, force } }));
                        onDone(`Cancellation ${x.action.replace("_", " ")}.`);
                    } catch (x) {
                        setErr((x as Error).message);
                    } finally {
                        setBusy(false);
                    }
                }}
            >
                <p>The run's workflow and the task it waits for get cancellation; unfinished tasks end cancelled.</p>
                <label>
                    Reason (optional)
                    <input name="reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
                </label>
                <label class="check">
                    <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> Terminate instead (force)
                </label>
                <ErrorBox error={err ?? undefined} />
                <div class="actions">
                    <button type="submit" class="danger" disabled={busy}>
                        Cancel run
                    </button>
                    <button type="button" class="ghost" onClick={onClose}>
                        Keep it running
                    </button>
                </div>
            </form>
        </Dialog>
    );
}
