import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { can } from "../../api";
import { deleteCalendar, patchCalendar, useCalendar, useYearDays, type Calendar, type Day } from "../../api/calendars";
import { relative } from "../../format";
import { href, Link, navigate, setQuery, useLoc } from "../../router";
import { useStream } from "../../stream";
import { Dialog, ErrorBox, Flash, Loading } from "../../ui";
import { weekendWords } from "./list";
import { YearGrid } from "./yearGrid";

/** One calendar: its facts, a year of dates on a grid (an admin edits a date by choosing it), its blackouts. */
export function CalendarView({ id }: { id: string }): JSX.Element {
    const loc = useLoc();
    const year = Number(loc.query.get("year")) || new Date().getUTCFullYear();
    const [tick, setTick] = useState(0);
    const cal = useCalendar(id, tick);
    const days = useYearDays(id, year, tick);
    const [chosen, setChosen] = useState<Day | null>(null);
    const [deleting, setDeleting] = useState(false);
    const [flash, setFlash] = useState<string | null>(null);
    useStream((c) => c.kind.startsWith("calendar.") && c.subject === id, () => setTick((t) => t + 1), 300);
    const c = cal.data?.c;
    useEffect(() => {
        document.title = `${c?.name ?? "Calendar"} · ACP console`;
    }, [c?.name]);
    if (!c) return cal.error ? <ErrorBox error={cal.error} /> : <Loading what="the calendar" />;
    const imported = loc.query.get("imported");
    const edit = async (patch: Parameters<typeof patchCalendar>[2], done: string) => {
        await patchCalendar(id, cal.data?.etag ?? null, patch);
        setChosen(null);
        setFlash(done);
        setTick((t) => t + 1);
    };
    return (
        <section>
            <nav aria-label="Breadcrumb" class="small">
                <Link href={href("/calendars")}>Calendars</Link> /
            </nav>
            <h1>{c.name}</h1>
            {imported !== null && (
                <Flash text={`Imported ${imported} event(s) as holidays${loc.query.get("warnings") !== "0" ? `, with ${loc.query.get("warnings")} warning(s)` : ""}.`} />
            )}
            <Flash text={flash} />
            <dl class="facts">
                <dt>Time zone</dt>
                <dd>{c.timezone}</dd>
                <dt>Weekend</dt>
                <dd>{weekendWords(c.weekend_days)}</dd>
                <dt>Covered until</dt>
                <dd>{c.covered_until ?? "no limit"}</dd>
                <dt>Version</dt>
                <dd>
                    {c.version}, changed {relative(c.updated_at)}
                </dd>
            </dl>
            <div class="year-nav">
                <h2 id="year-heading">{year}</h2>
                <button type="button" class="ghost" aria-label="Previous year" onClick={() => setQuery({ year: String(year - 1), imported: null, warnings: null })}>
                    ←
                </button>
                <button type="button" class="ghost" aria-label="Next year" onClick={() => setQuery({ year: String(year + 1), imported: null, warnings: null })}>
                    →
                </button>
            </div>
            <ErrorBox error={days.error} />
            {days.data ? <YearGrid year={year} days={days.data.days} onChoose={can("admin") ? setChosen : undefined} /> : <Loading what="the dates" />}
            <h2>Holidays in {year}</h2>
            <HolidayList c={c} year={year} />
            <h2>Blackouts</h2>
            {c.blackouts.length === 0 ? (
                <p class="muted">No blackout window.</p>
            ) : (
                <ul class="times">
                    {c.blackouts.map((b) => (
                        <li key={b.from}>
                            {b.from} to {b.to} ({c.timezone}){b.name ? `: ${b.name}` : ""}
                        </li>
                    ))}
                </ul>
            )}
            {can("admin") && (
                <div class="actions">
                    <button type="button" class="danger" onClick={() => setDeleting(true)}>
                        Delete calendar
                    </button>
                </div>
            )}
            {chosen && <DayDialog c={c} day={chosen} onClose={() => setChosen(null)} edit={edit} />}
            {deleting && (
                <DeleteCalendarDialog
                    c={c}
                    onClose={() => setDeleting(false)}
                    remove={async () => {
                        await deleteCalendar(id, cal.data?.etag ?? null);
                        navigate(href("/calendars"));
                    }}
                />
            )}
        </section>
    );
}

function HolidayList({ c, year }: { c: Calendar; year: number }): JSX.Element {
    const holidays = c.holidays.filter((h) => h.date.startsWith(`${year}-`));
    const added = c.working_days.filter((w) => w.date.startsWith(`${year}-`));
    if (holidays.length === 0 && added.length === 0) return <p class="muted">None listed for {year}.</p>;
    return (
        <ul class="times" data-testid="holidays">
            {holidays.map((h) => (
                <li key={h.date}>
                    {h.date}: {h.name}
                </li>
            ))}
            {added.map((w) => (
                <li key={w.date}>
                    {w.date}: working day{w.name ? ` (${w.name})` : ""}
                </li>
            ))}
        </ul>
    );
}

type Edit = (patch: Parameters<typeof patchCalendar>[2], done: string) => Promise<void>;

/** What choosing a date offers: make a business day a holiday, a weekend date a working day, or undo either. */
function DayDialog({ c, day, onClose, edit }: { c: Calendar; day: Day; onClose: () => void; edit: Edit }): JSX.Element {
    const [name, setName] = useState("");
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const run = (patch: Parameters<typeof patchCalendar>[2], done: string) => {
        setBusy(true);
        setErr(null);
        edit(patch, done).catch((x: unknown) => {
            setBusy(false);
            setErr(x instanceof Error ? x.message : String(x));
        });
    };
    let body: JSX.Element;
    if (day.kind === "holiday") {
        body = (
            <>
                <p>
                    A holiday: <strong>{day.name}</strong>.
                </p>
                <button type="button" disabled={busy} onClick={() => run({ holidays: c.holidays.filter((h) => h.date !== day.date) }, `${day.date} is no longer a holiday.`)}>
                    Remove the holiday
                </button>
            </>
        );
    } else if (day.kind === "working_day") {
        body = (
            <>
                <p>An added working day{day.name ? `: ${day.name}` : ""}.</p>
                <button type="button" disabled={busy} onClick={() => run({ working_days: c.working_days.filter((w) => w.date !== day.date) }, `${day.date} is a weekend day again.`)}>
                    Remove the working day
                </button>
            </>
        );
    } else {
        const weekend = day.kind === "weekend";
        body = (
            <form
                onSubmit={(e) => {
                    e.preventDefault();
                    if (weekend) run({ working_days: [...c.working_days, { date: day.date, name: name.trim() || null }] }, `${day.date} is a working day.`);
                    else run({ holidays: [...c.holidays, { date: day.date, name: name.trim() }] }, `${day.date} is a holiday.`);
                }}
            >
                <p>{weekend ? "A weekend day: make it a working day (a make-up day)?" : "A business day: make it a holiday?"}</p>
                <label>
                    {weekend ? "Name (optional)" : "Holiday name"}
                    <input name="day-name" value={name} maxLength={200} required={!weekend} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
                </label>
                <div class="actions">
                    <button type="submit" disabled={busy || (!weekend && name.trim() === "")}>
                        {weekend ? "Make it a working day" : "Make it a holiday"}
                    </button>
                </div>
            </form>
        );
    }
    return (
        <Dialog title={day.date} onClose={onClose}>
            {day.beyond_coverage && <p class="warn">After the calendar's coverage ({c.covered_until}): only its weekend days are known here.</p>}
            {body}
            <ErrorBox error={err ?? undefined} />
        </Dialog>
    );
}

function DeleteCalendarDialog({ c, remove, onClose }: { c: Calendar; remove: () => Promise<void>; onClose: () => void }): JSX.Element {
    const [err, setErr] = useState<string | null>(null);
    return (
        <Dialog title={`Delete ${c.name}?`} onClose={onClose}>
            <p>The calendar and its dates are removed.</p>
            <ErrorBox error={err ?? undefined} />
            <div class="actions">
                <button
                    type="button"
                    class="danger"
                    onClick={() => {
                        remove().catch((x: unknown) => setErr(x instanceof Error ? x.message : String(x)));
                    }}
                >
                    Delete
                </button>
                <button type="button" class="ghost" onClick={onClose}>
                    Cancel
                </button>
            </div>
        </Dialog>
    );
}
