import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useHourlyStats } from "../../api/activities";
import { fmtTime, labelsText, relative, triggerWords } from "../../format";
import { href, Link } from "../../router";
import { Status } from "../../ui";
import { Sparkline } from "./sparkline";

/** One activity of the list: trigger in words (with its calendar's name from `calendars`), next fire, last run, 24 h sparkline, open alerts, state. */
export function Row({ a, zone, tick, calendars }: { a: Activity; zone: string; tick: number; calendars: Map<string, string> }): JSX.Element {
    const calendarId = a.trigger.type === "event" ? undefined : a.trigger.calendar?.id;
    const s = a.summary;
    const next = s?.next_fire ?? a.schedule.next_fire_times[0] ?? null;
    return (
        <tr data-activity={a.id}>
            <td data-label="Activity">
                <Link href={href(`/activities/${a.id}`)} class="strong">
                    {a.name}
                </Link>
                {a.description && <div class="muted small">{a.description}</div>}
                <div class="labels">
                    {labelsText(a.labels).map((l) => (
                        <Link class="chip" key={l} href={href("/activities", { label: l })}>
                            {l}
                        </Link>
                    ))}
                </div>
            </td>
            <td data-label="Trigger" class="trigger">
                {triggerWords(a.trigger, calendarId ? calendars.get(calendarId) : null)}
            </td>
            <td data-label="Next fire">
                {next ? (
                    <>
                        <time dateTime={next}>{fmtTime(next, zone, "short")}</time> <span class="muted small">{zone}</span>
                        <div class="muted small">{relative(next)}</div>
                    </>
                ) : (
                    <span class="muted">—</span>
                )}
            </td>
            <td data-label="Last run">
                {s?.last_run ? (
                    <Link href={href(`/runs/${s.last_run.run_id}`)}>
                        <Status status={s.last_run.status} />
                        <div class="muted small">{relative(s.last_run.finished_at ?? s.last_run.created_at)}</div>
                    </Link>
                ) : (
                    <span class="muted">never</span>
                )}
            </td>
            <td data-label="Last 24 h">
                <Spark id={a.id} tick={`${s?.last_run?.run_id ?? ""}:${s?.last_run?.status ?? ""}:${Math.floor(tick / 20)}`} />
                {s && (
                    <div class="muted small">
                        {s.runs_24h} runs{s.success_rate_24h != null ? `, ${Math.round(s.success_rate_24h * 100)} % ok` : ""}
                        {s.failed_24h ? `, ${s.failed_24h} failed` : ""}
                    </div>
                )}
            </td>
            <td data-label="Alerts">
                {s && s.open_alerts > 0 ? (
                    <Link class="alert-count" href={href("/alerts", { activity: a.id, state: "open" })}>
                        {s.open_alerts} open
                    </Link>
                ) : (
                    <span class="muted">0</span>
                )}
            </td>
            <td data-label="State">
                {a.paused && (
                    <span class="badge paused" title={a.pause_note ?? ""}>
                        Paused{a.pause_note ? `: ${a.pause_note}` : ""}
                    </span>
                )}
                {!a.enabled && <span class="badge">Disabled</span>}
                <span class="badge sync" data-sync={a.schedule.sync_state} title={a.schedule.last_error ?? ""}>
                    {a.schedule.sync_state.replace("_", " ")}
                </span>
            </td>
        </tr>
    );
}

/** The sparkline of `id`'s last 24 hours; `tick` changes to refresh it. */
function Spark({ id, tick }: { id: string; tick: string }): JSX.Element {
    const stats = useHourlyStats(id, tick);
    return <Sparkline buckets={stats.data?.buckets ?? []} />;
}
