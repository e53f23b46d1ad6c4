import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Activity } from "../../api";
import type { BackfillResult } from "../../api/activity";
import { activityZone, fmtTime, isoToWall, wallToIso } from "../../format";
import { Dialog, ErrorBox } from "../../ui";
import { TimesTable } from "./timesTable";

/** Backfill of a range of wall times: a dry run first, then its confirmation; `backfill` makes the calls. */

export function BackfillDialog(props: {
    a: Activity;
    backfill: (start: string, end: string, dryRun: boolean) => Promise<BackfillResult>;
    onClose: () => void;
    onDone: (t: string) => void;
}): JSX.Element {
    const { a, onClose, onDone } = props;
    const zone = activityZone(a);
    const now = Date.now();
    const [start, setStart] = useState(isoToWall(new Date(now - 3600_000).toISOString(), zone));
    const [end, setEnd] = useState(isoToWall(new Date(now).toISOString(), zone));
    const [plan, setPlan] = useState<BackfillResult | null>(null);
    const [result, setResult] = useState<BackfillResult | null>(null);
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const call = async (dry: boolean) => {
        const s = wallToIso(start, zone);
        const e = wallToIso(end, zone);
        if (!s || !e) {
            setErr("Enter a start and an end.");
            return;
        }
        setBusy(true);
        setErr(null);
        try {
            const r = await props.backfill(s, e, dry);
            if (dry) setPlan(r);
            else setResult(r);
        } catch (x) {
            setErr((x as Error).message);
        } finally {
            setBusy(false);
        }
    };
    const counts = (r: BackfillResult) => {
        const m = new Map<string, number>();
        for (const t of r.times) m.set(t.action, (m.get(t.action) ?? 0) + 1);
        return [...m].map(([k, v]) => `${v} ${k}`).join(", ") || "no time";
    };
    return (
        <Dialog title={`Backfill ${a.name}`} onClose={onClose} wide>
            {result ? (
                <div>
                    <p role="status">Done: {counts(result)}.</p>
                    {result.next_start && <p>The range was cut at 1000 times; continue from {fmtTime(result.next_start, zone)}.</p>}
                    <TimesTable times={result.times} zone={zone} />
                    <div class="actions">
                        <button type="button" onClick={() => onDone(`Backfill: ${counts(result)}.`)}>
                            Close
                        </button>
                    </div>
                </div>
            ) : (
                <form
                    onSubmit={(e) => {
                        e.preventDefault();
                        void call(true);
                    }}
                >
                    <p>
                        Runs every nominal time in [start, end) that has not run yet. Times are wall times in <strong>{zone}</strong>.
                    </p>
                    <div class="row">
                        <label>
                            Start
                            <input
                                type="datetime-local"
                                name="start"
                                value={start}
                                onInput={(e) => {
                                    setStart((e.target as HTMLInputElement).value);
                                    setPlan(null);
                                }}
                            />
                        </label>
                        <label>
                            End (exclusive)
                            <input
                                type="datetime-local"
                                name="end"
                                value={end}
                                onInput={(e) => {
                                    setEnd((e.target as HTMLInputElement).value);
                                    setPlan(null);
                                }}
                            />
                        </label>
                    </div>
                    <div class="actions">
                        <button type="submit" class={plan ? "ghost" : ""} disabled={busy}>
                            Dry run
                        </button>
                    </div>
                    <ErrorBox error={err ?? undefined} />
                    {plan && (
                        <div data-testid="backfill-plan">
                            <p>
                                Dry run: <strong>{counts(plan)}</strong>.{plan.next_start && ` Cut at 1000 times; the rest from ${fmtTime(plan.next_start, zone)}.`}
                            </p>
                            <TimesTable times={plan.times} zone={zone} />
                            <div class="actions">
                                <button type="button" disabled={busy || !plan.times.some((t) => t.action === "backfilled" || t.action === "pending")} onClick={() => void call(false)}>
                                    Confirm backfill
                                </button>
                                <button type="button" class="ghost" onClick={onClose}>
                                    Cancel
                                </button>
                            </div>
                        </div>
                    )}
                </form>
            )}
        </Dialog>
    );
}
