import type { JSX } from "preact";
import { useMemo, useState } from "preact/hooks";
import type { Entry } from "../../api";
import { fmtTime } from "../../format";
import { colour, words } from "../../palette";
import { href, Link } from "../../router";

/** The accessible fallback of the timeline: the times as a table (filterable, paged). */
export function TimesList({ entries, zone, now }: { entries: Entry[]; zone: string; now: number }): JSX.Element {
    const [open, setOpen] = useState(false);
    const [only, setOnly] = useState("runs");
    const [page, setPage] = useState(0);
    const rows = useMemo(() => {
        if (!open) return [];
        return entries.filter((e) => (only === "all" ? true : only === "runs" ? e.run_id || e.reason : e.status === only || e.reason === only)).reverse();
    }, [entries, only, open]);
    const per = 100;
    return (
        <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
            <summary>The times as a table</summary>
            {open && (
                <div>
                    <label class="inline">
                        Show
                        <select value={only} onChange={(e) => (setOnly((e.target as HTMLSelectElement).value), setPage(0))}>
                            <option value="runs">times with a run or a reason</option>
                            <option value="all">every time</option>
                            <option value="succeeded">succeeded</option>
                            <option value="failed">failed</option>
                            <option value="skipped">skipped</option>
                            <option value="running">running</option>
                        </select>
                    </label>
                    <table class="list compact" data-testid="timeline-table">
                        <thead>
                            <tr>
                                <th scope="col">Nominal time ({zone})</th>
                                <th scope="col">Outcome</th>
                                <th scope="col">Attempts</th>
                                <th scope="col">DST</th>
                                <th scope="col">Calendar</th>
                                <th scope="col">Run</th>
                            </tr>
                        </thead>
                        <tbody>
                            {rows.slice(page * per, page * per + per).map((e) => {
                                const k = e.status === "skipped" || e.status === "none" ? (e.reason ?? (new Date(e.scheduled_for).getTime() > now ? "not_yet_fired" : e.status)) : e.status;
                                return (
                                    <tr key={e.scheduled_for} data-key={k}>
                                        <td>
                                            <time dateTime={e.scheduled_for}>{fmtTime(e.scheduled_for, zone)}</time>
                                        </td>
                                        <td>
                                            <span class="swatch" style={{ background: colour(k) }} aria-hidden="true" /> {words(k)}
                                        </td>
                                        <td>{e.attempts ?? ""}</td>
                                        <td>{e.dst && e.dst !== "normal" ? e.dst.replace("_", " ") : ""}</td>
                                        <td data-testid="calendar-reason">{e.calendar ?? ""}</td>
                                        <td>{e.run_id ? <Link href={href(`/runs/${e.run_id}`)}>run</Link> : ""}</td>
                                    </tr>
                                );
                            })}
                        </tbody>
                    </table>
                    <div class="pager">
                        {page > 0 && (
                            <button type="button" class="ghost" onClick={() => setPage(page - 1)}>
                                Newer
                            </button>
                        )}
                        {(page + 1) * per < rows.length && (
                            <button type="button" class="ghost" onClick={() => setPage(page + 1)}>
                                Older
                            </button>
                        )}
                        <span class="muted small">{rows.length} rows</span>
                    </div>
                </div>
            )}
        </details>
    );
}
