import type { JSX } from "preact";
import type { Trigger } from "../../api";
import { usePreview } from "../../api/schedules";
import { fmtTime, triggerWords } from "../../format";

/** The next nominal times of the trigger being typed, from `POST /v1/schedules/preview`. */
export function Preview({ trigger }: { trigger: Trigger }): JSX.Element {
    const state = usePreview(trigger);
    const zone = trigger.type === "cron" ? trigger.timezone || "UTC" : "UTC";
    return (
        <section class="preview card" aria-labelledby="preview-title" aria-live="polite" aria-busy={state.busy}>
            <h2 id="preview-title">Next times</h2>
            <p class="small" data-testid="trigger-words">
                {triggerWords(trigger)}
            </p>
            {trigger.type === "event" ? (
                <p class="muted">An event trigger runs when a matching event arrives.</p>
            ) : state.error ? (
                <p class="error">{state.error}</p>
            ) : state.times ? (
                <ol class="times">
                    {state.times.map((t) => (
                        <li key={t.at}>
                            <time dateTime={t.at}>{fmtTime(t.at, zone)}</time>
                            {t.note !== "normal" && <span class="badge dst"> {t.note === "dst_gap" ? "DST gap" : "DST repeat"}</span>}
                        </li>
                    ))}
                </ol>
            ) : (
                <p class="muted">…</p>
            )}
        </section>
    );
}
