import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Activity } from "../../api";
import { RUN_STATUSES, RUN_TRIGGERS, type RunFilter } from "../../api/query";
import { isoToWall, wallToIso } from "../../format";
import { href, Link, setQuery } from "../../router";

/** The runs filter, kept in the URL: selects apply at once, the nominal-time range on Apply. */
export function RunFilters({ rq, activities, zone }: { rq: RunFilter; activities: Activity[]; zone: string }): JSX.Element {
    const [from, setFrom] = useState(rq.scheduled_after ? isoToWall(rq.scheduled_after, zone) : "");
    const [to, setTo] = useState(rq.scheduled_before ? isoToWall(rq.scheduled_before, zone) : "");
    useEffect(() => setFrom(rq.scheduled_after ? isoToWall(rq.scheduled_after, zone) : ""), [rq.scheduled_after, zone]);
    useEffect(() => setTo(rq.scheduled_before ? isoToWall(rq.scheduled_before, zone) : ""), [rq.scheduled_before, zone]);
    const any = Object.keys(rq).length > 0;
    return (
        <form
            class="filters"
            role="search"
            aria-label="Filter runs"
            onSubmit={(e) => {
                e.preventDefault();
                setQuery({ from: from ? wallToIso(from, zone) : null, to: to ? wallToIso(to, zone) : null, cursor: null });
            }}
        >
            <label>
                Status
                <select name="status" value={rq.status ?? ""} onChange={(e) => setQuery({ status: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {RUN_STATUSES.map((s) => (
                        <option key={s} value={s}>
                            {s.replace("_", " ")}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Trigger
                <select name="trigger" value={rq.trigger_type ?? ""} onChange={(e) => setQuery({ trigger: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {RUN_TRIGGERS.map((s) => (
                        <option key={s} value={s}>
                            {s}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Activity
                <select name="activity" value={rq.activity_id ?? ""} onChange={(e) => setQuery({ activity: (e.target as HTMLSelectElement).value, cursor: null })}>
                    <option value="">any</option>
                    {rq.activity_id && !activities.some((a) => a.id === rq.activity_id) && <option value={rq.activity_id}>{rq.activity_id}</option>}
                    {activities.map((a) => (
                        <option key={a.id} value={a.id}>
                            {a.name}
                        </option>
                    ))}
                </select>
            </label>
            <label>
                Nominal time from ({zone})
                <input type="datetime-local" name="from" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
            </label>
            <label>
                to
                <input type="datetime-local" name="to" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
            </label>
            <button type="submit">Apply</button>
            {any && (
                <Link class="button ghost" href={href("/runs")}>
                    Clear
                </Link>
            )}
        </form>
    );
}
