import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can } from "../api";
import { SUBJECT_TYPES, useAudit, type AuditEntry } from "../api/audit";
import { fmtTime, relative } from "../format";
import { href, Link, setQuery, useLoc } from "../router";
import { useStream } from "../stream";
import { ErrorBox, Loading, Pager, useListZone } from "../ui";

/** Where the console shows an entry's subject, when it has a page for it. */
function subjectLink(e: AuditEntry): string | null {
    switch (e.subject_type) {
        case "activity":
            return `/activities/${e.subject_id}`;
        case "run":
            return `/runs/${e.subject_id}`;
        case "calendar":
            return `/calendars/${e.subject_id}`;
        case "source":
            return `/sources/${e.subject_id}`;
        case "subscription":
            return `/subscriptions/${e.subject_id}`;
        default:
            return null;
    }
}

/** Who made a write: the key's name, else why there is none. */
export function byWhom(e: AuditEntry): string {
    if (e.key_name) return e.key_name;
    if (e.request_id.startsWith("cli-")) return "acp command line";
    if (e.request_id.startsWith("service-")) return "the service";
    return "authentication off";
}

/** The change of one entry, folded: before/after of a definition, or an action's summary. */
export function ChangeDetail({ e }: { e: AuditEntry }): JSX.Element {
    // Drawn once opened: a page of entries holds little text until asked.
    const [open, setOpen] = useState(false);
    return (
        <details onToggle={(ev) => setOpen((ev.currentTarget as HTMLDetailsElement).open)}>
            <summary class="small">Change</summary>
            {open && <pre>{JSON.stringify(e.change, null, 2)}</pre>}
        </details>
    );
}

/** The audit log: every accepted write, newest first, filtered by operation and subject. */
export function AuditView(): JSX.Element {
    const loc = useLoc();
    const zone = useListZone();
    const operation = loc.query.get("operation") ?? "";
    const subjectType = loc.query.get("subject_type") ?? "";
    const subjectId = loc.query.get("subject_id") ?? "";
    const keyId = loc.query.get("key_id") ?? "";
    const cursor = loc.query.get("cursor") ?? "";
    useEffect(() => {
        document.title = "Audit log · ACP console";
    }, []);
    const log = useAudit({ operation, subjectType, subjectId, keyId }, cursor);
    useStream((c) => c.kind === "audit.recorded", () => (cursor ? undefined : log.reload()), 500);
    if (!can("admin")) {
        return (
            <section>
                <h1>Audit log</h1>
                <p class="empty">Only a key of scope admin can read the audit log.</p>
            </section>
        );
    }
    const items = log.data?.items ?? [];
    return (
        <section>
            <h1>Audit log</h1>
            <p class="muted small">Every write the API accepted: which key, which operation, to what, and what changed. Entries are never changed or removed.</p>
            <form class="filters" role="search" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
                <label>
                    Operation
                    <input
                        name="operation"
                        value={operation}
                        placeholder="e.g. pause_activity"
                        onChange={(e) => setQuery({ operation: (e.target as HTMLInputElement).value.trim(), cursor: null })}
                    />
                </label>
                <label>
                    Subject
                    <select name="subject_type" value={subjectType} onChange={(e) => setQuery({ subject_type: (e.target as HTMLSelectElement).value, subject_id: null, cursor: null })}>
                        <option value="">any</option>
                        {SUBJECT_TYPES.map((t) => (
                            <option key={t} value={t}>
                                {t.replace("_", " ")}
                            </option>
                        ))}
                    </select>
                </label>
                {(subjectId || keyId) && (
                    <p>
                        {subjectId && <>Subject {subjectId} </>}
                        {keyId && <>Key {keyId} </>}
                        <Link href={href("/audit", { operation, subject_type: subjectType })}>(any)</Link>
                    </p>
                )}
            </form>
            <ErrorBox error={log.error} />
            {log.data === undefined && log.loading ? (
                <Loading what="the audit log" />
            ) : items.length === 0 ? (
                <p class="empty">No entry.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Audit log</caption>
                    <thead>
                        <tr>
                            <th scope="col">When</th>
                            <th scope="col">Who</th>
                            <th scope="col">Operation</th>
                            <th scope="col">Subject</th>
                            <th scope="col">Change</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((e) => {
                            const link = subjectLink(e);
                            return (
                                <tr key={e.seq} data-seq={e.seq} data-operation={e.operation}>
                                    <td data-label="When">
                                        <span title={fmtTime(e.at, zone)}>{relative(e.at)}</span>
                                        <div class="muted small">
                                            <code>{e.request_id}</code>
                                        </div>
                                    </td>
                                    <td data-label="Who">
                                        {e.key_id ? <Link href={href("/audit", { key_id: e.key_id })}>{byWhom(e)}</Link> : byWhom(e)}
                                    </td>
                                    <td data-label="Operation">
                                        <code>{e.operation}</code>
                                    </td>
                                    <td data-label="Subject">
                                        {e.subject_type.replace("_", " ")} {link ? <Link href={href(link)}>{e.subject_id.slice(0, 13)}</Link> : <code>{e.subject_id}</code>}
                                    </td>
                                    <td data-label="Change">
                                        <ChangeDetail e={e} />
                                    </td>
                                </tr>
                            );
                        })}
                    </tbody>
                </table>
            )}
            <Pager next={log.data?.next_cursor} />
        </section>
    );
}
