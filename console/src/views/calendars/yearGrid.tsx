import type { JSX } from "preact";
import type { Day } from "../../api/calendars";

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const KIND_WORDS: Record<Day["kind"], string> = {
    business: "business day",
    working_day: "working day (added)",
    weekend: "weekend",
    holiday: "holiday",
};

function label(d: Day): string {
    const when = new Date(`${d.date}T00:00:00Z`).toLocaleDateString("en", { weekday: "short", day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
    const what = KIND_WORDS[d.kind] + (d.name ? `: ${d.name}` : "");
    return `${when}, ${what}${d.beyond_coverage ? " (beyond the calendar's coverage)" : ""}`;
}

/**
 * A year of dates as twelve month tables, weeks from Monday, each date
 * marked by what it is (business, weekend, holiday, added working day;
 * dates past the coverage hatched). With `onChoose`, each date is a button.
 */
export function YearGrid({ year, days, onChoose }: { year: number; days: Day[]; onChoose?: ((d: Day) => void) | undefined }): JSX.Element {
    const byDate = new Map(days.map((d) => [d.date, d]));
    return (
        <div>
            <ul class="cal-legend" aria-label="Legend">
                {(["business", "weekend", "holiday", "working_day"] as const).map((k) => (
                    <li key={k}>
                        <span class={`cal-day ${k}`} aria-hidden="true" /> {KIND_WORDS[k]}
                    </li>
                ))}
                <li>
                    <span class="cal-day business beyond" aria-hidden="true" /> beyond coverage
                </li>
            </ul>
            <div class="year-grid" data-testid="year-grid">
                {Array.from({ length: 12 }, (_, m) => {
                    const first = new Date(Date.UTC(year, m, 1));
                    const length = new Date(Date.UTC(year, m + 1, 0)).getUTCDate();
                    const lead = (first.getUTCDay() + 6) % 7;
                    const cells: (Day | null)[] = Array.from({ length: lead }, () => null);
                    for (let d = 1; d <= length; d++) {
                        const date = `${year}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
                        cells.push(byDate.get(date) ?? { date, kind: "business", business_day: true, beyond_coverage: false, name: null });
                    }
                    while (cells.length % 7 !== 0) cells.push(null);
                    const weeks = Array.from({ length: cells.length / 7 }, (_, w) => cells.slice(w * 7, w * 7 + 7));
                    const monthName = first.toLocaleString("en", { month: "long", timeZone: "UTC" });
                    return (
                        <table key={m} class="month">
                            <caption>{monthName}</caption>
                            <thead>
                                <tr>
                                    {WEEKDAYS.map((w) => (
                                        <th key={w} scope="col" abbr={w}>
                                            {w.slice(0, 2)}
                                        </th>
                                    ))}
                                </tr>
                            </thead>
                            <tbody>
                                {weeks.map((week, w) => (
                                    <tr key={w}>
                                        {week.map((d, i) => (
                                            <td key={i}>
                                                {d &&
                                                    (onChoose ? (
                                                        <button
                                                            type="button"
                                                            class={`cal-day ${d.kind}${d.beyond_coverage ? " beyond" : ""}`}
                                                            data-date={d.date}
                                                            data-kind={d.kind}
                                                            aria-label={label(d)}
                                                            title={label(d)}
                                                            onClick={() => onChoose(d)}
                                                        >
                                                            {Number(d.date.slice(8))}
                                                        </button>
                                                    ) : (
                                                        <span class={`cal-day ${d.kind}${d.beyond_coverage ? " beyond" : ""}`} data-date={d.date} data-kind={d.kind} title={label(d)}>
                                                            <span class="sr-only">{label(d)}</span>
                                                            <span aria-hidden="true">{Number(d.date.slice(8))}</span>
                                                        </span>
                                                    ))}
                                            </td>
                                        ))}
                                    </tr>
                                ))}
                            </tbody>
                        </table>
                    );
                })}
            </div>
        </div>
    );
}
