// The schedule preview: the next nominal times of a trigger being typed.
import { useEffect, useState } from "preact/hooks";
import { acp, unwrap, type Schemas, type Trigger } from "./client";

export type PreviewTime = Schemas["PreviewTime"];

export interface Preview {
    times?: PreviewTime[];
    error?: string;
    busy: boolean;
}

/**
 * The next `count` times of `trigger` (`POST /v1/schedules/preview`), asked
 * 300 ms after it last changed so that typing sends one request, not one a
 * key; an event trigger has none and asks nothing.
 */
export function usePreview(trigger: Trigger, count = 8): Preview {
    const [state, setState] = useState<Preview>({ busy: false });
    const key = JSON.stringify(trigger);
    useEffect(() => {
        if (trigger.type === "event") {
            setState({ busy: false });
            return;
        }
        let live = true;
        const h = window.setTimeout(() => {
            setState((s) => ({ ...s, busy: true }));
            unwrap(acp().POST("/v1/schedules/preview", { body: { trigger, count } })).then(
                (data) => live && setState({ times: data.next, busy: false }),
                (e: unknown) => live && setState({ error: e instanceof Error ? e.message : String(e), busy: false }),
            );
        }, 300);
        return () => {
            live = false;
            window.clearTimeout(h);
        };
    }, [key, count]);
    return state;
}
