import type { JSX } from "preact";
import { useMemo } from "preact/hooks";
import type { Entry } from "../../api";
import { fmtTime } from "../../format";
import { words } from "../../palette";

/** What the window holds beyond colours: paused spans, DST notes, retried times. */
export function WindowNotes({ entries, zone }: { entries: Entry[]; zone: string }): JSX.Element | null {
    const notes = useMemo(() => {
        const spans: { first: string; last: string; n: number }[] = [];
        let cur: { first: string; last: string; n: number } | null = null;
        const dst: Entry[] = [];
        let retried = 0;
        for (const e of entries) {
            if (e.reason === "paused") {
                if (cur) {
                    cur.last = e.scheduled_for;
                    cur.n++;
                } else spans.push((cur = { first: e.scheduled_for, last: e.scheduled_for, n: 1 }));
            } else cur = null;
            if (e.dst && e.dst !== "normal") dst.push(e);
            if ((e.attempts ?? 1) > 1) retried++;
        }
        return { spans, dst, retried };
    }, [entries]);
    if (notes.spans.length === 0 && notes.dst.length === 0 && notes.retried === 0) return null;
    return (
        <ul class="notes small" aria-label="Notes on this window" data-testid="window-notes">
            {notes.spans.slice(-5).map((p) => (
                <li key={p.first} data-note="paused">
                    Paused span: {fmtTime(p.first, zone)} – {fmtTime(p.last, zone)} ({p.n} {p.n === 1 ? "time" : "times"})
                </li>
            ))}
            {notes.dst.slice(0, 10).map((e) => (
                <li key={e.scheduled_for} data-note={e.dst ?? ""}>
                    {e.dst === "dst_gap" ? "DST gap" : "DST repeat"}: {fmtTime(e.scheduled_for, zone)}
                    {e.dst === "dst_gap" ? " (the wall time does not exist; shifted or skipped by the DST policy)" : " (the wall time happens twice; the DST policy says which run)"}
                    {e.reason ? ` — ${words(e.reason)}` : ""}
                </li>
            ))}
            {notes.retried > 0 && (
                <li data-note="retried">
                    {notes.retried} {notes.retried === 1 ? "time was" : "times were"} retried (more than one attempt).
                </li>
            )}
        </ul>
    );
}
