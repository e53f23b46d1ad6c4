import type { JSX } from "preact";
import type { Run } from "../../api";
import { fmtTime, relative, runDuration } from "../../format";
import { href, Link } from "../../router";
import { Status } from "../../ui";

/** Runs of any activities, one row each; `names` gives the activities' names. */
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
