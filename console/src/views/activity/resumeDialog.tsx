import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { fetchTimeline, type Activity, type Entry } from "../../api";
import { useResumeDryRun, type Missed, type PauseResult } from "../../api/activity";
import { activityZone, fmtTime, policyOnResume, rateOf, scheduledOf } from "../../format";
import { words } from "../../palette";
import { Dialog, ErrorBox, Loading, useAsync } from "../../ui";
import { TimesTable } from "./timesTable";

/** The times missed while paused and what was (or will be) done with each. */
function MissedView({ m, zone }: { m: Missed; zone: string }): JSX.Element {
    return (
        <div data-testid="missed">
            <p>
                Paused from {fmtTime(m.from, zone)} to {fmtTime(m.until, zone)}: <strong>{m.total}</strong> missed times; {m.runs.length} run
                {m.skipped ? `, ${m.skipped} skipped` : ""}
                {m.pending ? `, ${m.pending} pending (Temporal unreachable)` : ""}.
            </p>
            {m.skipped_span && (
                <p>
                    Not run: {m.skipped_span.count} times from {fmtTime(m.skipped_span.first, zone)} to {fmtTime(m.skipped_span.last, zone)} ({words(m.skipped_span.reason)}).
                </p>
            )}
            {m.runs.length > 0 && <TimesTable times={m.runs} zone={zone} />}
            {m.calendar_skipped.length > 0 && (
                <>
                    <p>Not run by the business calendar (recorded skipped):</p>
                    <TimesTable times={m.calendar_skipped} zone={zone} />
                </>
            )}
            {m.in_flight.length > 0 && (
                <>
                    <p>Also due (fired around the resume):</p>
                    <TimesTable times={m.in_flight} zone={zone} />
                </>
            )}
        </div>
    );
}

/** Resume, showing first what the misfire policy will do; `resume` makes the call. */
export function ResumeDialog({ a, resume, onClose, onDone }: { a: Activity; resume: (note: string) => Promise<PauseResult>; onClose: () => void; onDone: (t: string) => void }): JSX.Element {
    const zone = activityZone(a);
    const [note, setNote] = useState("");
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    const [result, setResult] = useState<PauseResult | null>(null);
    // What the misfire policy will do: a dry run when the API has one.
    const dry = useResumeDryRun(a.id);
    return (
        <Dialog title={`Resume ${a.name}`} onClose={onClose} wide>
            {result ? (
                <div>
                    <p role="status">Resumed.</p>
                    {result.missed && <MissedView m={result.missed} zone={zone} />}
                    <div class="actions">
                        <button type="button" onClick={() => onDone("Resumed.")}>
                            Close
                        </button>
                    </div>
                </div>
            ) : (
                <form
                    onSubmit={async (e) => {
                        e.preventDefault();
                        setBusy(true);
                        try {
                            const r = await resume(note);
                            setResult(r);
                        } catch (x) {
                            setErr((x as Error).message);
                        } finally {
                            setBusy(false);
                        }
                    }}
                >
                    {a.pause_note && (
                        <p>
                            Paused with the note: <q>{a.pause_note}</q>
                        </p>
                    )}
                    <p data-testid="policy">{policyOnResume(a.trigger)}</p>
                    {dry.loading ? (
                        <Loading what="what the policy will do" />
                    ) : dry.data ? (
                        <MissedView m={dry.data} zone={zone} />
                    ) : dry.data === null ? (
                        <p>No time was missed.</p>
                    ) : (
                        <ResumeEstimate a={a} zone={zone} />
                    )}
                    <label>
                        Note (optional)
                        <input name="note" value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
                    </label>
                    <ErrorBox error={err ?? undefined} />
                    <div class="actions">
                        <button type="submit" disabled={busy}>
                            Resume
                        </button>
                        <button type="button" class="ghost" onClick={onClose}>
                            Cancel
                        </button>
                    </div>
                </form>
            )}
        </Dialog>
    );
}

/**
 * Without a dry run of resume: the times missed while paused, from the
 * timeline of the last 24 hours, and what the policy does with them.
 */
function ResumeEstimate({ a, zone }: { a: Activity; zone: string }): JSX.Element {
    const est = useAsync(async () => {
        const now = Date.now();
        const entries = await fetchTimeline(a.id, now - 86400_000, now, rateOf(a.trigger));
        const missed: Entry[] = [];
        for (let i = entries.length - 1; i >= 0 && entries[i]!.reason === "paused"; i--) missed.unshift(entries[i]!);
        return missed;
    }, [a.id]);
    if (est.loading && !est.data) return <Loading what="the missed times" />;
    const missed = est.data ?? [];
    const policy = scheduledOf(a.trigger)?.misfire_policy ?? "skip";
    const limit = scheduledOf(a.trigger)?.catchup_limit ?? 10;
    const first = missed[0];
    const last = missed[missed.length - 1];
    let what: string;
    if (missed.length === 0 || !first || !last) what = "No time was missed in the last 24 hours.";
    else if (policy === "skip") what = `${missed.length} missed times (${fmtTime(first.scheduled_for, zone)} – ${fmtTime(last.scheduled_for, zone)}) will not run.`;
    else if (policy === "catchup") {
        const n = Math.min(limit, missed.length);
        what = `The latest ${n} of ${missed.length} missed times will run${missed.length > n ? `; the ${missed.length - n} before them are skipped` : ""}.`;
    } else what = `One run for ${fmtTime(last.scheduled_for, zone)}, its window reaching back over the ${missed.length} missed times.`;
    const runs = policy === "catchup" ? missed.slice(-limit) : policy === "compress" && last ? [last] : [];
    return (
        <div data-testid="resume-estimate">
            <p>
                {what} <span class="muted small">(from the timeline: this service offers no dry run of resume, so the exact answer is shown after it ran)</span>
            </p>
            {runs.length > 0 && (
                <TimesTable times={runs.map((e) => ({ scheduled_for: e.scheduled_for, workflow_id: e.workflow_id, action: "backfilled" as const, reason: null }))} zone={zone} />
            )}
        </div>
    );
}
