import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { outcomeWords, type BulkKind, type RunFilter } from "../../api/query";
import { bulkAct, useBulkCount } from "../../api/runs";
import { fmtTime, zoneOf } from "../../format";
import { href, Link } from "../../router";
import { Dialog, ErrorBox, Loading } from "../../ui";

/** Bulk retry/cancel of the filter: shows what matches (each activity's dry run), then acts on each activity. */
export function BulkDialog({ kind, rq, names, onClose, onDone }: { kind: BulkKind; rq: RunFilter; names: Map<string, string>; onClose: () => void; onDone: () => void }): JSX.Element {
    const count = useBulkCount(kind, rq);
    const [busy, setBusy] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const [result, setResult] = useState<Map<string, number> | null>(null);
    const [reason, setReason] = useState("");
    const run = async () => {
        if (!count.data) return;
        setBusy(true);
        setErr(null);
        try {
            setResult(await bulkAct(kind, count.data.byActivity.keys(), rq, reason));
            onDone();
        } catch (e) {
            setErr((e as Error).message);
        } finally {
            setBusy(false);
        }
    };
    const verb = kind === "retry" ? "Retry" : "Cancel";
    return (
        <Dialog title={`${verb} the runs of this filter`} onClose={onClose}>
            {count.loading ? (
                <Loading what="the matching runs" />
            ) : count.error ? (
                <ErrorBox error={count.error} />
            ) : result ? (
                <div>
                    <p role="status" data-testid="bulk-result">
                        Done: {outcomeWords(result)}.
                    </p>
                    <button type="button" onClick={onClose}>
                        Close
                    </button>
                </div>
            ) : count.data ? (
                <div>
                    <p data-testid="bulk-count">
                        <strong>
                            {count.data.total}
                            {count.data.capped ? "+" : ""}
                        </strong>{" "}
                        {kind === "retry" ? "failed or cancelled" : "running or queued"} runs match
                        {count.data.byActivity.size > 0 && ` in ${count.data.byActivity.size} ${count.data.byActivity.size === 1 ? "activity" : "activities"}`}.
                    </p>
                    {count.data.byActivity.size > 0 && (
                        <ul>
                            {[...count.data.byActivity].map(([id, n]) => (
                                <li key={id}>
                                    {names.get(id) ?? id}: {n}
                                </li>
                            ))}
                        </ul>
                    )}
                    {count.data.sample.length > 0 && (
                        <ul class="small" data-testid="bulk-sample">
                            {count.data.sample.map((r) => (
                                <li key={r.run_id}>
                                    <Link href={href(`/runs/${r.run_id}`)}>
                                        <code>{r.run_id.slice(0, 8)}</code>
                                    </Link>{" "}
                                    {r.scheduled_for ? fmtTime(r.scheduled_for, zoneOf("local")) : r.workflow_id}
                                </li>
                            ))}
                            {count.data.total > count.data.sample.length && <li>…</li>}
                        </ul>
                    )}
                    {count.data.capped && <p class="small">More than one request's limit match: the action repeats until none is left.</p>}
                    {kind === "cancel" && (
                        <label>
                            Reason (optional)
                            <input value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
                        </label>
                    )}
                    <ErrorBox error={err ?? undefined} />
                    <div class="actions">
                        <button type="button" class={kind === "cancel" ? "danger" : ""} disabled={busy || count.data.total === 0} onClick={() => void run()}>
                            {verb} {count.data.total} runs
                        </button>
                        <button type="button" class="ghost" onClick={onClose}>
                            Close
                        </button>
                    </div>
                </div>
            ) : null}
        </Dialog>
    );
}
