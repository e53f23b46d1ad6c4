import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { useActivityIndex } from "../api/activities";
import { useAlerts } from "../api/alerts";
import { ALERT_KINDS, alertFilterOf } from "../api/query";
import { fmtTime, relative } from "../format";
import { href, Link, setQuery, useLoc } from "../router";
import { useStream } from "../stream";
import { ErrorBox, Loading, Pager, useListZone } from "../ui";

export function AlertsView(): JSX.Element {
    const loc = useLoc();
    const filter = alertFilterOf(loc.query);
    const { state, kind, activity } = filter;
    const cursor = loc.query.get("cursor") ?? "";
    const zone = useListZone();
    useEffect(() => {
        document.title = "Alerts · ACP console";
    }, []);
    const alerts = useAlerts(filter, cursor);
    const { names } = useActivityIndex();
    useStream((c) => c.kind.startsWith("alert."), alerts.reload, 400);
    const items = alerts.data?.items ?? [];
    return (
        <section>
            <h1>Alerts</h1>
            <form class="filters" role="search" aria-label="Filter alerts" onSubmit={(e) => e.preventDefault()}>
                <label>
                    State
                    <select name="state" value={state} onChange={(e) => setQuery({ state: (e.target as HTMLSelectElement).value, cursor: null })}>
                        <option value="">open and resolved</option>
                        <option value="open">open</option>
                        <option value="resolved">resolved</option>
                    </select>
                </label>
                <label>
                    Kind
                    <select name="kind" value={kind ?? ""} onChange={(e) => setQuery({ kind: (e.target as HTMLSelectElement).value, cursor: null })}>
                        <option value="">any</option>
                        {ALERT_KINDS.map((k) => (
                            <option key={k} value={k}>
                                {k.replace("_", " ")}
                            </option>
                        ))}
                    </select>
                </label>
                {activity && (
                    <p>
                        Activity: {names.get(activity) ?? activity} <Link href={href("/alerts", { state })}>(all activities)</Link>
                    </p>
                )}
            </form>
            <ErrorBox error={alerts.error} />
            {alerts.data === undefined && alerts.loading ? (
                <Loading what="alerts" />
            ) : items.length === 0 ? (
                <p class="empty">No alert.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Alerts</caption>
                    <thead>
                        <tr>
                            <th scope="col">State</th>
                            <th scope="col">Kind</th>
                            <th scope="col">Activity</th>
                            <th scope="col">Summary</th>
                            <th scope="col">Opened</th>
                            <th scope="col">Last seen / resolved</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((al) => (
                            <tr key={al.id} data-state={al.state}>
                                <td data-label="State">
                                    <span class={`badge ${al.state === "open" ? "paused" : ""}`}>{al.state}</span>
                                </td>
                                <td data-label="Kind">{al.kind.replace("_", " ")}</td>
                                <td data-label="Activity">
                                    <Link href={href(`/activities/${al.activity_id}`)}>{names.get(al.activity_id) ?? al.activity_id.slice(0, 8)}</Link>
                                </td>
                                <td data-label="Summary">
                                    {al.summary}
                                    {Object.keys(al.detail ?? {}).length > 0 && (
                                        <details>
                                            <summary class="small">Detail</summary>
                                            <pre>{JSON.stringify(al.detail, null, 2)}</pre>
                                        </details>
                                    )}
                                </td>
                                <td data-label="Opened">
                                    <span title={fmtTime(al.opened_at, zone)}>{relative(al.opened_at)}</span>
                                </td>
                                <td data-label="Last seen / resolved">{al.resolved_at ? `resolved ${relative(al.resolved_at)}` : `seen ${relative(al.last_seen_at)}`}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={alerts.data?.next_cursor} />
        </section>
    );
}
