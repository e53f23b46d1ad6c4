import type { JSX } from "preact";
import type { Activity } from "../../api";
import { useDailyStats } from "../../api/activity";
import { useHolidays } from "../../api/calendars";
import { scheduledOf } from "../../format";
import { Heatmap } from "../../heatmap";
import { href, Link, useLoc } from "../../router";
import { ErrorBox } from "../../ui";

/** The calendar of a year's runs per day, moved by links to the year before and after; the holidays of the trigger's business calendar marked. */

export function HeatmapSection({ a, tick }: { a: Activity; tick: number }): JSX.Element {
    const loc = useLoc();
    const year = Number(loc.query.get("year") ?? new Date().getUTCFullYear());
    const stats = useDailyStats(a.id, year, tick);
    const holidays = useHolidays(scheduledOf(a.trigger)?.calendar?.id, year, tick);
    const endAt = scheduledOf(a.trigger)?.end_at;
    const end = endAt ? new Date(endAt).getTime() : Infinity;
    const planned = (d: Date) => a.enabled && a.trigger.type !== "event" && d.getTime() < end;
    return (
        <section class="block" aria-labelledby="hm-title">
            <div class="head">
                <h2 id="hm-title">Runs per day, {year}</h2>
                <div class="seg" role="group" aria-label="Year">
                    <Link href={href(loc.path, { ...Object.fromEntries(loc.query), year: year - 1 })}>← {year - 1}</Link>
                    <Link href={href(loc.path, { ...Object.fromEntries(loc.query), year: year + 1 })}>{year + 1} →</Link>
                </div>
            </div>
            <ErrorBox error={stats.error ?? holidays.error} />
            <Heatmap year={year} buckets={stats.data?.buckets ?? []} planned={planned} activityId={a.id} holidays={holidays.data} />
        </section>
    );
}
