import type { JSX } from "preact";
import type { Run } from "../../api";
import { fmtTime, runDuration } from "../../format";
import { temporalWorkflowUrl } from "../../settings";
import { Status } from "../../ui";

/** A run's tasks (with earlier attempts and outputs) and its run attempts. */
export function RunTasks({ r, zone }: { r: Run; zone: string }): JSX.Element {
    return (
        <>
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
        </>
    );
}
