import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useActivityIndex } from "../api/activities";
import { useEvent, useEvents } from "../api/events";
import { eventFilterOf } from "../api/query";
import { fmtTime, relative } from "../format";
import { href, Link, setQuery, useLoc } from "../router";
import { useStream } from "../stream";
import { ErrorBox, Loading, Pager, Status, useListZone } from "../ui";

export function EventsView(): JSX.Element {
    const loc = useLoc();
    const filter = eventFilterOf(loc.query);
    const cursor = loc.query.get("cursor") ?? "";
    const zone = useListZone();
    useEffect(() => {
        document.title = "Events · ACP console";
    }, []);
    const events = useEvents(filter, cursor);
    useStream((c) => c.kind.startsWith("event."), events.reload, 500);
    const [t, setT] = useState(filter.type);
    const [s, setS] = useState(filter.source);
    const items = events.data?.items ?? [];
    return (
        <section>
            <h1>Events</h1>
            <form
                class="filters"
                role="search"
                aria-label="Filter events"
                onSubmit={(e) => {
                    e.preventDefault();
                    setQuery({ type: t, source: s, cursor: null });
                }}
            >
                <label>
                    Event type
                    <input name="type" value={t} onInput={(e) => setT((e.target as HTMLInputElement).value)} />
                </label>
                <label>
                    Source
                    <input name="source" value={s} onInput={(e) => setS((e.target as HTMLInputElement).value)} />
                </label>
                <button type="submit">Filter</button>
            </form>
            <ErrorBox error={events.error} />
            {events.data === undefined && events.loading ? (
                <Loading what="events" />
            ) : items.length === 0 ? (
                <p class="empty">No event.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Events</caption>
                    <thead>
                        <tr>
                            <th scope="col">Event ID</th>
                            <th scope="col">Type</th>
                            <th scope="col">Source</th>
                            <th scope="col">Received</th>
                            <th scope="col">ID from</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((e) => (
                            <tr key={e.event_id}>
                                <td data-label="Event ID">
                                    <Link href={href(`/events/${encodeURIComponent(e.event_id)}`)}>
                                        <code>{e.event_id.length > 40 ? `${e.event_id.slice(0, 40)}…` : e.event_id}</code>
                                    </Link>
                                </td>
                                <td data-label="Type">
                                    <Link href={href("/events", { type: e.event_type })}>{e.event_type}</Link>
                                </td>
                                <td data-label="Source">{e.source}</td>
                                <td data-label="Received">
                                    <span title={fmtTime(e.received_at, zone)}>{relative(e.received_at)}</span>
                                </td>
                                <td data-label="ID from">{e.event_id_origin.replace("_", " ")}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={events.data?.next_cursor} />
        </section>
    );
}

export function EventView({ id }: { id: string }): JSX.Element {
    const zone = useListZone();
    const ev = useEvent(id);
    const { names } = useActivityIndex();
    useStream((c) => c.subject === id || c.kind.startsWith("run."), ev.reload, 600);
    useEffect(() => {
        document.title = `Event ${id} · ACP console`;
    }, [id]);
    const e = ev.data;
    if (!e) return ev.error ? <ErrorBox error={ev.error} /> : <Loading what="the event" />;
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/events")}>Events</Link> /
            </nav>
            <h1>
                Event <code>{e.event_id}</code>
            </h1>
            <dl class="facts">
                <dt>Type</dt>
                <dd>{e.event_type}</dd>
                <dt>Source</dt>
                <dd>{e.source}</dd>
                <dt>Received</dt>
                <dd>{fmtTime(e.received_at, zone)}</dd>
                {e.occurred_at && (
                    <>
                        <dt>Occurred</dt>
                        <dd>{fmtTime(e.occurred_at, zone)}</dd>
                    </>
                )}
                <dt>ID from</dt>
                <dd>{e.event_id_origin.replace("_", " ")}</dd>
            </dl>
            <h2>Dispatches</h2>
            {(e.dispatches ?? []).length === 0 ? (
                <p class="muted">No activity subscribes to this event type.</p>
            ) : (
                <table class="list">
                    <thead>
                        <tr>
                            <th scope="col">Activity</th>
                            <th scope="col">Outcome</th>
                            <th scope="col">Run</th>
                            <th scope="col">Absorbed by</th>
                            <th scope="col">Attempts</th>
                        </tr>
                    </thead>
                    <tbody>
                        {(e.dispatches ?? []).map((d) => (
                            <tr key={d.workflow_id}>
                                <td data-label="Activity">
                                    <Link href={href(`/activities/${d.activity_id}`)}>{names.get(d.activity_id) ?? <code>{d.activity_id.slice(0, 8)}</code>}</Link>
                                </td>
                                <td data-label="Outcome">
                                    <span class="badge">{d.outcome ?? d.state}</span>
                                    {d.last_error && <div class="small error">{d.last_error}</div>}
                                </td>
                                <td data-label="Run">
                                    <Link href={href(`/runs/${d.run_id}`)}>{d.run_status ? <Status status={d.run_status} /> : <code>{d.run_id.slice(0, 8)}</code>}</Link>
                                </td>
                                <td data-label="Absorbed by">
                                    {d.absorbed_by_run_id ? (
                                        <Link href={href(`/runs/${d.absorbed_by_run_id}`)}>
                                            run <code>{d.absorbed_by_run_id.slice(0, 8)}</code>
                                        </Link>
                                    ) : (
                                        "—"
                                    )}
                                </td>
                                <td data-label="Attempts">
                                    {d.attempts} {d.state === "pending" && <span class="muted">(pending)</span>}
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <h2>Payload</h2>
            <pre>{JSON.stringify(e.payload, null, 2)}</pre>
            {(e.conflicts ?? []).length > 0 && (
                <>
                    <h2>Conflicting re-deliveries</h2>
                    <ul>
                        {(e.conflicts ?? []).map((c, i) => (
                            <li key={i}>
                                {fmtTime(c.seen_at, zone)}: differs in {c.differs.join(", ")}
                            </li>
                        ))}
                    </ul>
                </>
            )}
        </section>
    );
}
