import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Activity } from "../../api";
import { scheduledOf } from "../../format";
import { Dialog, ErrorBox } from "../../ui";

/** Pause with a note; `pause` makes the call. */

export function PauseDialog({ a, pause, onClose, onDone }: { a: Activity; pause: (note: string) => Promise<unknown>; onClose: () => void; onDone: (t: string) => void }): JSX.Element {
    const [note, setNote] = useState("");
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    return (
        <Dialog title={`Pause ${a.name}`} onClose={onClose}>
            <form
                onSubmit={async (e) => {
                    e.preventDefault();
                    setBusy(true);
                    try {
                        await pause(note);
                        onDone("Paused.");
                    } catch (x) {
                        setErr((x as Error).message);
                    } finally {
                        setBusy(false);
                    }
                }}
            >
                <p>Fires while paused are dropped; resuming applies the misfire policy ({scheduledOf(a.trigger)?.misfire_policy ?? "skip"}) to them.</p>
                <label>
                    Note (why, until when)
                    <textarea name="note" rows={3} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} autoFocus />
                </label>
                <ErrorBox error={err ?? undefined} />
                <div class="actions">
                    <button type="submit" disabled={busy}>
                        Pause
                    </button>
                    <button type="button" class="ghost" onClick={onClose}>
                        Cancel
                    </button>
                </div>
            </form>
        </Dialog>
    );
}
