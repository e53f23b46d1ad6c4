import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useCalendarNames } from "../../api/calendars";
import { activityZone, fmtTime, labelsText, relative, triggerWords, zoneOf } from "../../format";
import { href, Link } from "../../router";
import { temporalScheduleUrl } from "../../settings";
import { useZoneMode } from "../../ui";

/** What the activity is: trigger, state, labels, tasks, next fires, the last 24 hours, IDs. */

export function Facts({ a }: { a: Activity }): JSX.Element {
    const mode = useZoneMode();
    const zone = zoneOf(mode, activityZone(a));
    const s = a.summary;
    const calendars = useCalendarNames();
    const calendarId = a.trigger.type === "event" ? undefined : a.trigger.calendar?.id;
    return (
        <dl class="facts">
            <dt>Trigger</dt>
            <dd data-testid="trigger-words">{triggerWords(a.trigger, calendarId ? calendars.get(calendarId) : null)}</dd>
            {a.description && (
                <>
                    <dt>Description</dt>
                    <dd>{a.description}</dd>
                </>
            )}
            <dt>State</dt>
            <dd>
                {a.paused ? (
                    <span class="badge paused" data-testid="paused-badge">
                        Paused{a.pause_note ? `: ${a.pause_note}` : ""}
                    </span>
                ) : (
                    <span class="badge">Active</span>
                )}
                {!a.enabled && <span class="badge">Disabled</span>}
                <span class="badge sync" data-sync={a.schedule.sync_state}>
                    sync: {a.schedule.sync_state.replace("_", " ")}
                </span>
                {a.schedule.last_error && <span class="error small">{a.schedule.last_error}</span>}
            </dd>
            {labelsText(a.labels).length > 0 && (
                <>
                    <dt>Labels</dt>
                    <dd>
                        {labelsText(a.labels).map((l) => (
                            <Link class="chip" key={l} href={href("/activities", { label: l })}>
                                {l}
                            </Link>
                        ))}
                    </dd>
                </>
            )}
            <dt>Tasks</dt>
            <dd>{a.tasks.map((t, i) => `${i + 1}. ${t.name ? `${t.name} (${t.task_type})` : t.task_type}`).join("  ")}</dd>
            {a.schedule.next_fire_times.length > 0 && (
                <>
                    <dt>Next fires</dt>
                    <dd>
                        {a.schedule.next_fire_times.slice(0, 3).map((t) => (
                            <span key={t} class="badge">
                                <time dateTime={t}>{fmtTime(t, zone)}</time>
                            </span>
                        ))}
                        <span class="muted small">{zone}</span>
                    </dd>
                </>
            )}
            {s && (
                <>
                    <dt>Last 24 h</dt>
                    <dd>
                        {s.runs_24h} runs, {s.succeeded_24h} succeeded, {s.failed_24h} failed
                        {s.last_run && (
                            <>
                                {" "}
                                · last: <Link href={href(`/runs/${s.last_run.run_id}`)}>{s.last_run.status}</Link> {relative(s.last_run.created_at)}
                            </>
                        )}
                    </dd>
                </>
            )}
            <dt>ID</dt>
            <dd>
                <code>{a.id}</code> · version {a.version}
                {a.schedule.schedule_id && (
                    <>
                        {" "}
                        ·{" "}
                        <a href={temporalScheduleUrl(a.schedule.schedule_id)} target="_blank" rel="noreferrer">
                            schedule in the Temporal UI
                        </a>
                    </>
                )}
            </dd>
        </dl>
    );
}
