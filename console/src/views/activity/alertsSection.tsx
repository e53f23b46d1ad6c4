import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useActivityAlerts } from "../../api/activity";
import { relative } from "../../format";
import { href, Link } from "../../router";
import { ErrorBox } from "../../ui";

/** The activity's latest alerts. */

export function AlertsSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const alerts = useActivityAlerts(a.id, tick);
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
