import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useRecentRuns } from "../../api/activity";
import { activityZone, fmtTime, relative, runDuration, zoneOf } from "../../format";
import { href, Link } from "../../router";
import { ErrorBox, Status, useZoneMode } from "../../ui";

/** The activity's latest runs. */

export function RecentRuns({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const mode = useZoneMode();
    const zone = zoneOf(mode, activityZone(a));
    const runs = useRecentRuns(a.id, tick);
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
