import { useEffect, useRef } from "preact/hooks";
import { auth, type Schemas } from "./api";
import { streamToken, streamUrl } from "./api/stream";
import { signal } from "./signal";

export type Change = Schemas["ChangeEvent"];

/** The live connection's state, shown in the header. */
export const live = signal<"connecting" | "live" | "reconnecting" | "off">("off");

const KINDS = [
    "run.created",
    "run.status_changed",
    "run.task_started",
    "run.task_ended",
    "run.retried",
    "run.cancel_requested",
    "run.cancelled",
    "activity.created",
    "activity.updated",
    "activity.deleted",
    "activity.paused",
    "activity.resumed",
    "activity.sync_state",
    "activity.replanned",
    "alert.opened",
    "alert.resolved",
    "event.dispatched",
];

type Listener = (c: Change | null) => void;
const listeners = new Set<Listener>();
let source: EventSource | null = null;
let lastId: string | null = null;
let retry = 0;
let timer: number | undefined;
let running = false;

function emit(c: Change | null): void {
    for (const l of [...listeners]) l(c);
}

async function connect(): Promise<void> {
    if (!running) return;
    const a = auth.value;
    if (a.state !== "in") return;
    live.value = retry === 0 && lastId === null ? "connecting" : "reconnecting";
    let token: string | null = null;
    if (a.session.authentication === "required") {
        const t = await streamToken();
        if (!running) return;
        if (!("token" in t)) {
            if (t.status === 401) return; // the client signs out
            schedule();
            return;
        }
        token = t.token;
    }
    // Resume after the last change seen: no gap, no duplicate.
    const url = streamUrl(token, lastId);
    const es = new EventSource(url);
    source = es;
    es.onopen = () => {
        retry = 0;
        live.value = "live";
        // A (re)connection may have missed changes before `since` was known.
        if (lastId === null) emit(null);
    };
    const onChange = (ev: MessageEvent<string>) => {
        if (ev.lastEventId) lastId = ev.lastEventId;
        try {
            emit(JSON.parse(ev.data) as Change);
        } catch {
            /* not a change */
        }
    };
    for (const k of KINDS) es.addEventListener(k, onChange as EventListener);
    es.addEventListener("resync", () => {
        // Too far behind: refresh everything and start from the next change.
        close();
        lastId = null;
        emit(null);
        schedule(0);
    });
    es.addEventListener("revoked", () => {
        close();
        // Ask for a token: its 401 brings back the prompt.
        void streamToken();
    });
    es.onerror = () => {
        // The token may have expired: always reconnect with a fresh one.
        close();
        schedule();
    };
}

function close(): void {
    if (source) {
        source.close();
        source = null;
    }
}

function schedule(delay?: number): void {
    if (!running) return;
    live.value = "reconnecting";
    const d = delay ?? Math.min(30_000, 500 * 2 ** retry++);
    window.clearTimeout(timer);
    timer = window.setTimeout(() => void connect(), d);
}

// The browser knows when the network went away: drop the connection then, and
// reconnect (with `since`) as soon as it is back rather than at the next retry.
window.addEventListener("offline", () => {
    if (!running) return;
    close();
    window.clearTimeout(timer);
    live.value = "reconnecting";
});
window.addEventListener("online", () => {
    if (!running || source) return;
    retry = 0;
    window.clearTimeout(timer);
    void connect();
});

export function startStream(): void {
    if (running) return;
    running = true;
    retry = 0;
    void connect();
}

export function stopStream(): void {
    running = false;
    window.clearTimeout(timer);
    close();
    lastId = null;
    live.value = "off";
}

/**
 * Calls `refresh` after the changes `relevant` accepts (at most once per
 * `delay`), and after a resync (when changes may have been missed).
 */
export function useStream(relevant: (c: Change) => boolean, refresh: () => void, delay = 300): void {
    const r = useRef({ relevant, refresh });
    r.current = { relevant, refresh };
    useEffect(() => {
        let t: number | undefined;
        const l: Listener = (c) => {
            if (c !== null && !r.current.relevant(c)) return;
            // At most one refresh per `delay`, never postponed by a steady flow of changes.
            if (t !== undefined) return;
            t = window.setTimeout(() => {
                t = undefined;
                r.current.refresh();
            }, delay);
        };
        listeners.add(l);
        return () => {
            listeners.delete(l);
            window.clearTimeout(t);
        };
    }, [delay]);
}
