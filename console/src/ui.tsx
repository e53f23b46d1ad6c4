import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api";
import { colour, words } from "./palette";
import { href, Link, setQuery, useLoc } from "./router";
import { zoneOf, type ZoneMode } from "./format";

export interface Async<T> {
    data: T | undefined;
    error: string | undefined;
    loading: boolean;
    reload: () => void;
}

/**
 * Loads `fn()` whenever `deps` change; `reload` re-runs it, keeping the old
 * data while it runs. A reload asked while a load is in flight runs once that
 * one has answered (its answer is shown first, never thrown away).
 */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
    const [state, set] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
    const gen = useRef(0);
    const busy = useRef(false);
    const again = useRef(false);
    const fnRef = useRef(fn);
    fnRef.current = fn;
    const start = useCallback(() => {
        const g = gen.current;
        busy.current = true;
        again.current = false;
        set((s) => ({ ...s, loading: true }));
        const done = (next: (s: { data?: T; error?: string; loading: boolean }) => { data?: T; error?: string; loading: boolean }) => {
            if (g !== gen.current) return;
            busy.current = false;
            set(next);
            if (again.current) start();
        };
        fnRef.current().then(
            (data) => done(() => ({ data, loading: again.current })),
            (e: unknown) => done((s) => ({ data: s.data, error: e instanceof Error ? e.message : String(e), loading: again.current })),
        );
    }, []);
    const reload = useCallback(() => {
        if (busy.current) again.current = true;
        else start();
    }, []);
    // eslint-disable-next-line react-hooks/exhaustive-deps
    useEffect(() => {
        // New inputs: whatever is in flight is for the old ones.
        gen.current++;
        // Keep what is shown while the new answer comes (no flicker on a refresh).
        set((s) => ({ data: s.data, loading: true }));
        start();
    }, deps);
    return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function ErrorBox({ error }: { error: string | undefined }): JSX.Element | null {
    if (!error) return null;
    return (
        <div class="error" role="alert">
            {error}
        </div>
    );
}

export function Loading({ what }: { what?: string }): JSX.Element {
    return (
        <p class="muted" role="status">
            Loading{what ? ` ${what}` : ""}…
        </p>
    );
}

export function Status({ status, reason }: { status: string; reason?: string | null | undefined }): JSX.Element {
    const key = status === "skipped" && reason ? reason : status;
    return (
        <span class="badge" data-status={status}>
            <span class="swatch" style={{ background: colour(key) }} aria-hidden="true" />
            {status === "skipped" && reason ? `skipped: ${reason.replace(/_/g, " ")}` : words(status)}
        </span>
    );
}

/** A modal dialog (native <dialog>: focus is trapped, Escape closes). */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }): JSX.Element {
    const ref = useRef<HTMLDialogElement>(null);
    useEffect(() => {
        const d = ref.current;
        if (d && !d.open) d.showModal();
        const back = document.activeElement as HTMLElement | null;
        return () => back?.focus?.();
    }, []);
    return (
        <dialog
            ref={ref}
            class={props.wide ? "wide" : ""}
            aria-labelledby="dialog-title"
            onCancel={(e) => {
                e.preventDefault();
                props.onClose();
            }}
        >
            <div class="dialog-head">
                <h2 id="dialog-title">{props.title}</h2>
                <button type="button" class="ghost" aria-label="Close dialog" onClick={props.onClose}>
                    ×
                </button>
            </div>
            {props.children}
        </dialog>
    );
}

/** The zone switch: activity zone / browser / UTC, kept in the URL (`tz`). */
export function ZoneSwitch({ zoneLabel }: { zoneLabel?: string }): JSX.Element {
    const loc = useLoc();
    const cur = (loc.query.get("tz") as ZoneMode | null) ?? "activity";
    const opts: [ZoneMode, string][] = [
        ["activity", zoneLabel ? `Activity zone (${zoneLabel})` : "Activity zone"],
        ["local", `Browser (${Intl.DateTimeFormat().resolvedOptions().timeZone})`],
        ["utc", "UTC"],
    ];
    return (
        <label class="inline">
            Times in{" "}
            <select value={cur} onChange={(e) => setQuery({ tz: (e.target as HTMLSelectElement).value === "activity" ? null : (e.target as HTMLSelectElement).value })}>
                {opts.map(([v, l]) => (
                    <option value={v} key={v}>
                        {l}
                    </option>
                ))}
            </select>
        </label>
    );
}

export function useZoneMode(): ZoneMode {
    const loc = useLoc();
    const v = loc.query.get("tz");
    return v === "utc" || v === "local" ? v : "activity";
}

/** The zone of a view spanning activities: the browser's, or UTC when asked (no activity's zone applies). */
export function useListZone(): string {
    const m = useZoneMode();
    return zoneOf(m === "activity" ? "local" : m);
}

/** Keyset paging: a link to the next page (the cursor in the URL) and back to the first. */
export function Pager({ next }: { next: string | null | undefined }): JSX.Element | null {
    const loc = useLoc();
    const hasCursor = loc.query.has("cursor");
    if (!next && !hasCursor) return null;
    const q = new URLSearchParams(loc.query);
    q.delete("cursor");
    const first = href(loc.path, q);
    const nq = new URLSearchParams(loc.query);
    if (next) nq.set("cursor", next);
    return (
        <nav class="pager" aria-label="Pages">
            {hasCursor && <Link href={first}>← First page</Link>}
            {next && <Link href={href(loc.path, nq)}>Next page →</Link>}
        </nav>
    );
}

export function isForbidden(e: unknown): boolean {
    return e instanceof ApiError && e.status === 403;
}

export function Copyable({ text }: { text: string }): JSX.Element {
    return <code class="id">{text}</code>;
}

/** Shows `text` as a transient confirmation. */
export function Flash({ text, kind = "ok" }: { text: string | null; kind?: "ok" | "error" }): JSX.Element | null {
    if (!text) return null;
    return (
        <div class={kind === "ok" ? "flash" : "error"} role={kind === "ok" ? "status" : "alert"}>
            {text}
        </div>
    );
}
