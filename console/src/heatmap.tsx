import type { JSX } from "preact";
import type { Schemas } from "./api";
import { CAL, calendarOf } from "./grid";
import { colour } from "./palette";
import { href, Link } from "./router";

type Bucket = Schemas["RunStatsBucket"];

/**
 * A calendar heatmap of one year: a cell per day, coloured by its runs'
 * outcomes; planned days outlined; the holidays of the trigger's business
 * calendar (`holidays`, names by date) marked, with the name in the title.
 */
export function Heatmap(props: { year: number; buckets: Bucket[]; planned: (day: Date) => boolean; activityId: string; holidays?: Map<string, string> | undefined }): JSX.Element {
    const { year, buckets } = props;
    const byDay = new Map<string, Bucket>();
    for (const b of buckets) byDay.set(b.start.slice(0, 10), b);
    const cal = calendarOf(year);
    const { days, width: w, height: h } = cal;
    const today = new Date().toISOString().slice(0, 10);
    const max = Math.max(1, ...buckets.map((b) => b.total));
    let withRuns = 0;
    let failedDays = 0;
    let holidays = 0;
    const rects = days.map((d, i) => {
        const k = d.toISOString().slice(0, 10);
        const b = byDay.get(k);
        const { x, y } = cal.dayAt(i);
        let fill = "var(--bg3)";
        let opacity = 1;
        let label = `${k}: no runs`;
        if (b && b.total > 0) {
            withRuns++;
            const bad = b.counts.failed + b.counts.timed_out;
            if (bad > 0) failedDays++;
            fill = bad > 0 ? colour("failed") : b.counts.succeeded > 0 ? colour("succeeded") : colour("skipped");
            opacity = 0.35 + 0.65 * Math.min(1, Math.log1p(b.total) / Math.log1p(max));
            label = `${k}: ${b.total} runs, ${b.counts.succeeded} succeeded, ${bad} failed or timed out, ${b.counts.skipped} skipped`;
        }
        const holiday = props.holidays?.get(k);
        const planned = k > today && holiday === undefined && props.planned(d);
        if (planned) label = `${k}: planned`;
        if (holiday !== undefined) {
            holidays++;
            label = `${label}; holiday: ${holiday}`;
        }
        const cls = [planned ? "planned" : k === today ? "today" : "", holiday !== undefined ? "holiday" : ""].filter(Boolean).join(" ");
        return (
            <rect key={k} x={x} y={y} width={CAL.cell} height={CAL.cell} rx={2} fill={planned ? "transparent" : fill} fill-opacity={opacity} class={cls} data-holiday={holiday}>
                <title>{label}</title>
            </rect>
        );
    });
    const months = Array.from({ length: 12 }, (_, m) => (
        <text key={m} x={cal.monthX(m)} y={10}>
            {new Date(Date.UTC(year, m, 1)).toLocaleString("en", { month: "short", timeZone: "UTC" })}
        </text>
    ));
    return (
        <div>
            <div class="scroll-x" tabIndex={0} role="region" aria-label={`Calendar of ${year}`}>
                <svg class="heatmap" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`Runs per day in ${year}: ${withRuns} days with runs, ${failedDays} with failures${holidays ? `, ${holidays} holidays` : ""}`}>
                    {months}
                    {["Mon", "Wed", "Fri"].map((d, i) => (
                        <text key={d} x={0} y={cal.weekdayY(i)}>
                            {d}
                        </text>
                    ))}
                    {rects}
                </svg>
            </div>
            <p class="legend small">
                <span>
                    <span class="swatch" style={{ background: colour("succeeded") }} /> days with runs, all fine
                </span>
                <span>
                    <span class="swatch" style={{ background: colour("failed") }} /> days with a failure
                </span>
                <span>
                    <span class="swatch" style={{ background: colour("skipped") }} /> only skipped
                </span>
                <span>
                    <span class="swatch planned-swatch" /> planned
                </span>
                {props.holidays && props.holidays.size > 0 && (
                    <span>
                        <span class="swatch holiday-swatch" /> holiday (the calendar's)
                    </span>
                )}
                <span>darker: more runs (UTC days)</span>
                <Link href={href("/runs", { activity: props.activityId, from: `${year}-01-01T00:00:00Z`, to: `${year + 1}-01-01T00:00:00Z` })}>This year's runs</Link>
            </p>
            <details>
                <summary>The days with runs as a table</summary>
                <table class="list compact">
                    <thead>
                        <tr>
                            <th scope="col">Day (UTC)</th>
                            <th scope="col">Runs</th>
                            <th scope="col">Succeeded</th>
                            <th scope="col">Failed or timed out</th>
                            <th scope="col">Skipped</th>
                        </tr>
                    </thead>
                    <tbody>
                        {buckets
                            .filter((b) => b.total > 0)
                            .reverse()
                            .map((b) => {
                                const day = b.start.slice(0, 10);
                                const next = new Date(new Date(b.start).getTime() + 86400000).toISOString();
                                return (
                                    <tr key={day}>
                                        <td>
                                            <Link href={href("/runs", { activity: props.activityId, from: b.start, to: next })}>{day}</Link>
                                        </td>
                                        <td>{b.total}</td>
                                        <td>{b.counts.succeeded}</td>
                                        <td>{b.counts.failed + b.counts.timed_out}</td>
                                        <td>{b.counts.skipped}</td>
                                    </tr>
                                );
                            })}
                    </tbody>
                </table>
            </details>
        </div>
    );
}
