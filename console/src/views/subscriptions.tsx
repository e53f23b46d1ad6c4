import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { useDeliveries, useSubscription, useSubscriptions } from "../api/subscriptions";
import { fmtTime, relative } from "../format";
import { href, Link, useLoc } from "../router";
import { ErrorBox, Loading, Pager, useListZone } from "../ui";

export function SubscriptionsView(): JSX.Element {
    const loc = useLoc();
    const cursor = loc.query.get("cursor") ?? "";
    useEffect(() => {
        document.title = "Subscriptions · ACP console";
    }, []);
    const subs = useSubscriptions(cursor);
    const items = subs.data?.items ?? [];
    return (
        <section>
            <h1>Subscriptions</h1>
            <p class="muted small">Notification endpoints: run outcomes and alerts, delivered as CloudEvents.</p>
            <ErrorBox error={subs.error} />
            {subs.data === undefined && subs.loading ? (
                <Loading what="subscriptions" />
            ) : items.length === 0 ? (
                <p class="empty">No subscription.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Subscriptions</caption>
                    <thead>
                        <tr>
                            <th scope="col">URL</th>
                            <th scope="col">Types</th>
                            <th scope="col">Activity</th>
                            <th scope="col">Created</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((s) => (
                            <tr key={s.id}>
                                <td data-label="URL">
                                    <Link href={href(`/subscriptions/${s.id}`)}>{s.url}</Link>
                                    {s.description && <div class="muted small">{s.description}</div>}
                                </td>
                                <td data-label="Types">{s.types.join(", ")}</td>
                                <td data-label="Activity">{s.activity_id ? <Link href={href(`/activities/${s.activity_id}`)}>{s.activity_id.slice(0, 8)}</Link> : "all"}</td>
                                <td data-label="Created">{relative(s.created_at)}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={subs.data?.next_cursor} />
        </section>
    );
}

export function SubscriptionView({ id }: { id: string }): JSX.Element {
    const loc = useLoc();
    const cursor = loc.query.get("cursor") ?? "";
    const zone = useListZone();
    const sub = useSubscription(id);
    const del = useDeliveries(id, cursor);
    useEffect(() => {
        const h = window.setInterval(del.reload, 10_000);
        return () => window.clearInterval(h);
    }, []);
    useEffect(() => {
        document.title = "Subscription · ACP console";
    }, []);
    const s = sub.data;
    if (!s) return sub.error ? <ErrorBox error={sub.error} /> : <Loading what="the subscription" />;
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/subscriptions")}>Subscriptions</Link> /
            </nav>
            <h1>{s.url}</h1>
            <dl class="facts">
                <dt>Types</dt>
                <dd>{s.types.join(", ")}</dd>
                <dt>Activity</dt>
                <dd>{s.activity_id ? <Link href={href(`/activities/${s.activity_id}`)}>{s.activity_id}</Link> : "all activities"}</dd>
                <dt>Signed</dt>
                <dd>{s.secret_ref ? `with the secret in ${s.secret_ref}` : "no"}</dd>
            </dl>
            <h2>Deliveries</h2>
            <ErrorBox error={del.error} />
            {(del.data?.items ?? []).length === 0 ? (
                <p class="muted">No delivery yet.</p>
            ) : (
                <table class="list">
                    <thead>
                        <tr>
                            <th scope="col">Created</th>
                            <th scope="col">Type</th>
                            <th scope="col">State</th>
                            <th scope="col">Attempts</th>
                        </tr>
                    </thead>
                    <tbody>
                        {(del.data?.items ?? []).map((d) => (
                            <tr key={d.id}>
                                <td data-label="Created">
                                    {fmtTime(d.created_at, zone)} <div class="muted small">{relative(d.created_at)}</div>
                                </td>
                                <td data-label="Type">{d.type}</td>
                                <td data-label="State">
                                    <span class="badge">{d.state}</span>
                                    {d.last_error && <div class="small">{d.last_error}</div>}
                                </td>
                                <td data-label="Attempts">
                                    <ol class="times">
                                        {d.attempts.map((a) => (
                                            <li key={a.attempt}>
                                                {fmtTime(a.attempted_at, zone, "time")}: {a.status_code ?? "no answer"} in {a.duration_ms} ms{a.error ? ` — ${a.error}` : ""}
                                            </li>
                                        ))}
                                    </ol>
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={del.data?.next_cursor} />
        </section>
    );
}
