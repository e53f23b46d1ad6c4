import type { JSX } from "preact";
import { useEffect } from "preact/hooks";
import { useRejected, useSource, useSources, type Source } from "../api/sources";
import { fmtTime, relative } from "../format";
import { href, Link, useLoc } from "../router";
import { ErrorBox, Loading, Pager, useListZone } from "../ui";

function Connected({ s }: { s: Source }): JSX.Element {
    if (!s.status) return <span class="muted">—</span>;
    return (
        <span class="badge" data-connected={s.status.connected}>
            <span class="swatch" style={{ background: s.status.connected ? "#2e9e44" : "#d1242f" }} aria-hidden="true" />
            {s.status.connected ? "connected" : "not connected"}
        </span>
    );
}

export function SourcesView(): JSX.Element {
    const loc = useLoc();
    const cursor = loc.query.get("cursor") ?? "";
    useEffect(() => {
        document.title = "Sources · ACP console";
    }, []);
    // Each source's live status, refreshed every 10 s.
    const sources = useSources(cursor);
    useEffect(() => {
        const h = window.setInterval(sources.reload, 10_000);
        return () => window.clearInterval(h);
    }, []);
    const items = sources.data?.items ?? [];
    return (
        <section>
            <h1>Sources</h1>
            <p class="muted small">Broker consumers (NATS JetStream, RabbitMQ) turning messages into events. Status refreshes every 10 s.</p>
            <ErrorBox error={sources.error} />
            {sources.data === undefined && sources.loading ? (
                <Loading what="sources" />
            ) : items.length === 0 ? (
                <p class="empty">No source is defined.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Sources</caption>
                    <thead>
                        <tr>
                            <th scope="col">Source</th>
                            <th scope="col">Kind</th>
                            <th scope="col">Status</th>
                            <th scope="col">Accepted</th>
                            <th scope="col">Rejected</th>
                            <th scope="col">Pending</th>
                            <th scope="col">Last error</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((s) => (
                            <tr key={s.id}>
                                <td data-label="Source">
                                    <Link href={href(`/sources/${s.id}`)}>{s.name}</Link>
                                    {!s.enabled && <span class="badge">disabled</span>}
                                </td>
                                <td data-label="Kind">{s.kind}</td>
                                <td data-label="Status">
                                    <Connected s={s} />
                                </td>
                                <td data-label="Accepted">{s.status?.accepted ?? "—"}</td>
                                <td data-label="Rejected">{s.status ? <Link href={href(`/sources/${s.id}`)}>{s.status.rejected}</Link> : "—"}</td>
                                <td data-label="Pending">{s.status?.pending ?? "—"}</td>
                                <td data-label="Last error">{s.status?.last_error ? <span class="small">{s.status.last_error}</span> : "—"}</td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={sources.data?.next} />
        </section>
    );
}

export function SourceView({ id }: { id: string }): JSX.Element {
    const zone = useListZone();
    const loc = useLoc();
    const cursor = loc.query.get("cursor") ?? "";
    const src = useSource(id);
    const rejected = useRejected(id, cursor);
    useEffect(() => {
        const h = window.setInterval(src.reload, 10_000);
        return () => window.clearInterval(h);
    }, []);
    const s = src.data;
    useEffect(() => {
        if (s) document.title = `${s.name} · Sources · ACP console`;
    }, [s?.name]);
    if (!s) return src.error ? <ErrorBox error={src.error} /> : <Loading what="the source" />;
    const st = s.status;
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/sources")}>Sources</Link> /
            </nav>
            <h1>{s.name}</h1>
            <dl class="facts">
                <dt>Kind</dt>
                <dd>{s.kind}</dd>
                <dt>Status</dt>
                <dd>
                    <Connected s={s} /> {st?.reported_at && <span class="muted small">reported {relative(st.reported_at)} by {st.reported_by}</span>}
                </dd>
                {st && (
                    <>
                        <dt>Messages</dt>
                        <dd>
                            {st.accepted} accepted, {st.rejected} rejected, {st.conflicts} conflicts{st.pending != null ? `, ${st.pending} pending` : ""}
                        </dd>
                        {st.last_error && (
                            <>
                                <dt>Last error</dt>
                                <dd>
                                    {st.last_error} <span class="muted small">{fmtTime(st.last_error_at, zone)}</span>
                                </dd>
                            </>
                        )}
                    </>
                )}
                <dt>Configuration</dt>
                <dd>
                    <pre>{JSON.stringify(s.config, null, 2)}</pre>
                </dd>
            </dl>
            <h2>Rejected messages</h2>
            <ErrorBox error={rejected.error} />
            {(rejected.data?.items ?? []).length === 0 ? (
                <p class="muted">None.</p>
            ) : (
                <table class="list">
                    <thead>
                        <tr>
                            <th scope="col">Received</th>
                            <th scope="col">Reason</th>
                            <th scope="col">Detail</th>
                            <th scope="col">Message</th>
                        </tr>
                    </thead>
                    <tbody>
                        {(rejected.data?.items ?? []).map((m) => (
                            <tr key={m.id}>
                                <td data-label="Received">{fmtTime(m.received_at, zone)}</td>
                                <td data-label="Reason">{m.reason.replace("_", " ")}</td>
                                <td data-label="Detail">{m.detail}</td>
                                <td data-label="Message">
                                    <details>
                                        <summary>
                                            {m.size} bytes{m.truncated ? " (first 4 KiB)" : ""}
                                        </summary>
                                        <pre>{m.raw_text ?? m.raw_base64}</pre>
                                    </details>
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={rejected.data?.next_cursor} />
        </section>
    );
}
