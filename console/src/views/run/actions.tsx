import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { can, type Run } from "../../api";
import { cancelRun, retryRun } from "../../api/runs";
import { ErrorBox } from "../../ui";
import { CancelDialog } from "./cancelDialog";

/** Cancel (a running or queued run) and retry (a failed, cancelled or timed-out one), for a key that may write. */
export function RunActions({ r, reload }: { r: Run; reload: () => void }): JSX.Element | null {
    const [dialog, setDialog] = useState<null | "cancel">(null);
    const [err, setErr] = useState<string | null>(null);
    const [msg, setMsg] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    if (!can("write")) return null;
    const canCancel = r.status === "running" || r.status === "queued";
    const canRetry = r.status === "failed" || r.status === "cancelled" || r.status === "timed_out";
    return (
        <div>
            <div class="actions" role="toolbar" aria-label="Run actions">
                {canCancel && (
                    <button type="button" class="danger" onClick={() => setDialog("cancel")}>
                        Cancel run
                    </button>
                )}
                {canRetry && (
                    <button
                        type="button"
                        disabled={busy}
                        onClick={async () => {
                            setBusy(true);
                            setErr(null);
                            try {
                                const x = await retryRun(r.run_id);
                                setMsg(`Retry started: attempt ${x.attempt}.`);
                                reload();
                            } catch (e) {
                                setErr((e as Error).message);
                            } finally {
                                setBusy(false);
                            }
                        }}
                    >
                        Retry run
                    </button>
                )}
            </div>
            {msg && (
                <p class="flash" role="status">
                    {msg}
                </p>
            )}
            <ErrorBox error={err ?? undefined} />
            {dialog === "cancel" && (
                <CancelDialog cancel={(reason, force) => cancelRun(r.run_id, reason, force)} onClose={() => setDialog(null)} onDone={(m) => (setDialog(null), setMsg(m), reload())} />
            )}
        </div>
    );
}
