import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { can, type Activity } from "../../api";
import { backfill, pause, remove, resume, triggerNow } from "../../api/activity";
import { href, Link, navigate } from "../../router";
import { BackfillDialog } from "./backfillDialog";
import { DeleteDialog } from "./deleteDialog";
import { PauseDialog } from "./pauseDialog";
import { ResumeDialog } from "./resumeDialog";

/** The write actions (for a key that may write) and the dialogs they open. */

export function Actions({ a, reload }: { a: Activity; reload: () => void }): JSX.Element | null {
    const [dialog, setDialog] = useState<null | "pause" | "resume" | "backfill" | "delete">(null);
    const [flash, setFlash] = useState<{ text: string; kind: "ok" | "error"; run?: string } | null>(null);
    const [busy, setBusy] = useState(false);
    if (!can("write")) return null;
    const scheduled = a.trigger.type !== "event";
    const trigger = async () => {
        setBusy(true);
        try {
            const r = await triggerNow(a.id);
            setFlash({ text: `Triggered: run ${r.outcome}.`, kind: "ok", run: r.run_id });
        } catch (e) {
            setFlash({ text: (e as Error).message, kind: "error" });
        } finally {
            setBusy(false);
        }
    };
    const done = (text: string) => {
        setDialog(null);
        setFlash({ text, kind: "ok" });
        reload();
    };
    return (
        <div>
            <div class="actions" role="toolbar" aria-label="Actions">
                <button type="button" onClick={trigger} disabled={busy}>
                    Trigger now
                </button>
                {scheduled && !a.paused && (
                    <button type="button" onClick={() => setDialog("pause")}>
                        Pause
                    </button>
                )}
                {scheduled && a.paused && (
                    <button type="button" onClick={() => setDialog("resume")}>
                        Resume
                    </button>
                )}
                {scheduled && (
                    <button type="button" onClick={() => setDialog("backfill")}>
                        Backfill
                    </button>
                )}
                <Link class="button ghost" href={href(`/activities/${a.id}/edit`)}>
                    Edit
                </Link>
                <button type="button" class="ghost" onClick={() => setDialog("delete")}>
                    Delete
                </button>
            </div>
            {flash && (
                <div class={flash.kind === "ok" ? "flash" : "error"} role={flash.kind === "ok" ? "status" : "alert"}>
                    {flash.text} {flash.run && <Link href={href(`/runs/${flash.run}`)}>Open the run</Link>}
                </div>
            )}
            {dialog === "pause" && <PauseDialog a={a} pause={(note) => pause(a.id, note)} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "resume" && <ResumeDialog a={a} resume={(note) => resume(a.id, note)} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "backfill" && <BackfillDialog a={a} backfill={(s, e, dry) => backfill(a.id, s, e, dry)} onClose={() => setDialog(null)} onDone={done} />}
            {dialog === "delete" && (
                <DeleteDialog
                    a={a}
                    remove={async () => {
                        await remove(a.id);
                        navigate(href("/activities"));
                    }}
                    onClose={() => setDialog(null)}
                />
            )}
        </div>
    );
}
