import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { useActivityOrNull } from "../../api/activities";
import { useRun } from "../../api/runs";
import { fmtTime, relative, runDuration, zoneOf } from "../../format";
import { href, Link } from "../../router";
import { temporalWorkflowUrl } from "../../settings";
import { useStream } from "../../stream";
import { ErrorBox, Loading, Status, useZoneMode, ZoneSwitch } from "../../ui";
import { RunActions } from "./actions";
import { RunTasks } from "./tasks";

/** One run: its facts, actions, tasks and attempts, refreshed by the change stream. */

export function RunView({ id }: { id: string }): JSX.Element {
    const run = useRun(id);
    const r = run.data;
    const act = useActivityOrNull(r?.activity_id);
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
            <RunTasks r={r} zone={zone} />
        </section>
    );
}
