import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can } from "../../api";
import { createCalendar, importCalendar, useCalendars } from "../../api/calendars";
import { relative } from "../../format";
import { href, Link, navigate, useLoc } from "../../router";
import { ErrorBox, Loading, Pager } from "../../ui";

const DAY_NAMES = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

export function weekendWords(days: number[]): string {
    return days.length === 0 ? "none" : days.map((d) => DAY_NAMES[d] ?? String(d)).join(", ");
}

/** The business calendars: each with its zone, weekend and coverage; a new one, or one imported from iCalendar. */
export function CalendarsView(): JSX.Element {
    const loc = useLoc();
    const cursor = loc.query.get("cursor") ?? "";
    useEffect(() => {
        document.title = "Calendars · ACP console";
    }, []);
    const cals = useCalendars(cursor);
    const items = cals.data?.items ?? [];
    return (
        <section>
            <h1>Calendars</h1>
            <p class="muted small">Business calendars: weekend days, holidays, added working days and blackout windows that activities schedule by.</p>
            {can("admin") && <NewCalendarForms />}
            <ErrorBox error={cals.error} />
            {cals.data === undefined && cals.loading ? (
                <Loading what="calendars" />
            ) : items.length === 0 ? (
                <p class="empty">No calendar.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">Calendars</caption>
                    <thead>
                        <tr>
                            <th scope="col">Name</th>
                            <th scope="col">Zone</th>
                            <th scope="col">Weekend</th>
                            <th scope="col">Holidays</th>
                            <th scope="col">Covered until</th>
                            <th scope="col">Changed</th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((c) => (
                            <tr key={c.id} data-calendar={c.id}>
                                <td data-label="Name">
                                    <Link href={href(`/calendars/${c.id}`)}>{c.name}</Link>
                                </td>
                                <td data-label="Zone">{c.timezone}</td>
                                <td data-label="Weekend">{weekendWords(c.weekend_days)}</td>
                                <td data-label="Holidays">{c.holidays.length}</td>
                                <td data-label="Covered until">{c.covered_until ?? "no limit"}</td>
                                <td data-label="Changed">
                                    {relative(c.updated_at)} <span class="muted small">v{c.version}</span>
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            <Pager next={cals.data?.next_cursor} />
        </section>
    );
}

function NewCalendarForms(): JSX.Element {
    const [name, setName] = useState("");
    const [zone, setZone] = useState("UTC");
    const [file, setFile] = useState<File | null>(null);
    const [busy, setBusy] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const fail = (x: unknown) => {
        setBusy(false);
        setErr(x instanceof Error ? x.message : String(x));
    };
    return (
        <>
            <form
                class="filters"
                aria-label="New calendar"
                onSubmit={(e) => {
                    e.preventDefault();
                    setBusy(true);
                    setErr(null);
                    createCalendar({ name: name.trim(), timezone: zone.trim() || null }).then((c) => navigate(href(`/calendars/${c.id}`)), fail);
                }}
            >
                <label>
                    Name
                    <input name="name" value={name} maxLength={200} placeholder="e.g. US market days" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
                </label>
                <label>
                    Time zone
                    <input name="timezone" value={zone} placeholder="UTC" onInput={(e) => setZone((e.target as HTMLInputElement).value)} />
                </label>
                <button type="submit" disabled={busy || name.trim() === ""}>
                    New calendar
                </button>
                <label>
                    iCalendar file (.ics)
                    <input name="ics" type="file" accept=".ics,text/calendar" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
                </label>
                <button
                    type="button"
                    class="ghost"
                    disabled={busy || file === null}
                    onClick={() => {
                        if (!file) return;
                        setBusy(true);
                        setErr(null);
                        // The name and zone above apply when given; else the file's own.
                        file.text()
                            .then((text) => importCalendar(name.trim(), zone.trim() === "UTC" ? "" : zone.trim(), text))
                            .then((r) => navigate(href(`/calendars/${r.calendar.id}`, { imported: String(r.events), warnings: String(r.warnings.length) })), fail);
                    }}
                >
                    Import
                </button>
            </form>
            {err && (
                <p class="error" role="alert">
                    {err}
                </p>
            )}
        </>
    );
}
