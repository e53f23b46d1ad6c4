import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { CancelRunResult } from "../../api/runs";
import { Dialog, ErrorBox } from "../../ui";

/** Cancel (or terminate) a run with a reason; `cancel` makes the call. */
export function CancelDialog({
    cancel,
    onClose,
    onDone,
}: {
    cancel: (reason: string, force: boolean) => Promise<CancelRunResult>;
    onClose: () => void;
    onDone: (m: string) => void;
}): JSX.Element {
    const [reason, setReason] = useState("");
    const [force, setForce] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    return (
        <Dialog title="Cancel this run?" onClose={onClose}>
            <form
                onSubmit={async (e) => {
                    e.preventDefault();
                    setBusy(true);
                    try {
                        const x = await cancel(reason, force);
                        onDone(`Cancellation ${x.action.replace("_", " ")}.`);
                    } catch (x) {
                        setErr((x as Error).message);
                    } finally {
                        setBusy(false);
                    }
                }}
            >
                <p>The run's workflow and the task it waits for get cancellation; unfinished tasks end cancelled.</p>
                <label>
                    Reason (optional)
                    <input name="reason" value={reason} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
                </label>
                <label class="check">
                    <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> Terminate instead (force)
                </label>
                <ErrorBox error={err ?? undefined} />
                <div class="actions">
                    <button type="submit" class="danger" disabled={busy}>
                        Cancel run
                    </button>
                    <button type="button" class="ghost" onClick={onClose}>
                        Keep it running
                    </button>
                </div>
            </form>
        </Dialog>
    );
}
