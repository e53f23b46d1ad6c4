import type { JSX } from "preact";
import { useState } from "preact/hooks";
import type { Activity } from "../../api";
import { Dialog, ErrorBox } from "../../ui";

/** Delete, after a confirmation; `remove` makes the call (and leaves the page). */

export function DeleteDialog({ a, remove, onClose }: { a: Activity; remove: () => Promise<void>; onClose: () => void }): JSX.Element {
    const [err, setErr] = useState<string | null>(null);
    return (
        <Dialog title={`Delete ${a.name}?`} onClose={onClose}>
            <p>The schedule is removed; the run history stays readable.</p>
            <ErrorBox error={err ?? undefined} />
            <div class="actions">
                <button
                    type="button"
                    class="danger"
                    onClick={async () => {
                        try {
                            await remove();
                        } catch (x) {
                            setErr((x as Error).message);
                        }
                    }}
                >
                    Delete
                </button>
                <button type="button" class="ghost" onClick={onClose}>
                    Cancel
                </button>
            </div>
        </Dialog>
    );
}
