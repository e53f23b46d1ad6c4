import type { Schemas } from "./api";
import { RUN_STATUSES } from "./api/query";

export type TimelineStatus = Schemas["TimelineStatus"];
export type TimelineReason = Schemas["TimelineReason"];

/** Every colour the console uses for an outcome: [light, dark]. */
const C: Record<string, [string, string]> = {
    succeeded: ["#2e9e44", "#3fb950"],
    failed: ["#d1242f", "#ff6b61"],
    running: ["#2f6fdb", "#58a6ff"],
    queued: ["#8250df", "#bc8cff"],
    cancelled: ["#8a5a00", "#d29922"],
    timed_out: ["#bf3989", "#f778ba"],
    skipped: ["#b08800", "#e3b341"],
    planned: ["#c4c9cf", "#4b535d"],
    none: ["#8c959f", "#6e7681"],
    // reasons
    not_yet_fired: ["#c4c9cf", "#4b535d"],
    misfire: ["#e36209", "#ff8a3d"],
    catchup_limit: ["#f5a05a", "#ffb77c"],
    compressed: ["#a04100", "#c96a2b"],
    concurrency_limit: ["#1b7c83", "#39c5cf"],
    rate_limited: ["#0598bc", "#66d9ff"],
    debounced: ["#5e6b7a", "#9fb0c3"],
    dst_policy: ["#6b4400", "#b58a3c"],
    dst_gap: ["#a475f9", "#cbb0ff"],
    dst_repeat: ["#5a32a3", "#8e6fd8"],
    paused: ["#57606a", "#8b949e"],
    before_start: ["#e1e5ea", "#30363d"],
    temporal_unavailable: ["#7a1f2b", "#c2515e"],
    overlap_skipped: ["#e5c100", "#f2d94e"],
    holiday: ["#0f6e3a", "#56c98a"],
    weekend: ["#6e7f8d", "#a3b3c0"],
    blackout: ["#24292f", "#adbac7"],
    rolled: ["#3a6ea5", "#7fb0e6"],
    beyond_coverage: ["#8f3f71", "#d384b6"],
};

export function dark(): boolean {
    return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

export function colour(key: string): string {
    const c = C[key] ?? C["none"]!;
    return dark() ? c[1] : c[0];
}

/** The legend key of a timeline cell (or run). */
export function cellKey(status: TimelineStatus, reason: TimelineReason | null | undefined, future: boolean): string {
    if (status === "skipped") return reason ?? "skipped";
    if (status === "none") {
        if (reason) return reason;
        return future ? "not_yet_fired" : "none";
    }
    return status;
}

export const STATUS_WORDS: Record<string, string> = {
    succeeded: "succeeded",
    failed: "failed",
    running: "running",
    queued: "queued (waiting for a slot)",
    cancelled: "cancelled",
    timed_out: "timed out",
    skipped: "skipped",
    none: "no run",
    not_yet_fired: "planned (not yet fired)",
    misfire: "skipped: misfire (too late)",
    catchup_limit: "skipped: beyond catch-up limit",
    compressed: "skipped: compressed into a later run",
    concurrency_limit: "skipped: concurrency limit",
    rate_limited: "skipped: rate limited",
    debounced: "skipped: debounced",
    dst_policy: "skipped: DST policy",
    dst_gap: "not run: DST gap",
    dst_repeat: "not run: DST repeat",
    paused: "paused span",
    before_start: "before start_at / activity creation",
    temporal_unavailable: "Temporal unavailable",
    overlap_skipped: "skipped: overlap (previous still running)",
    holiday: "not run: calendar holiday",
    weekend: "not run: calendar weekend",
    blackout: "not run: calendar blackout",
    rolled: "rolled to another business day",
    beyond_coverage: "not run: beyond calendar coverage",
};

export function words(key: string): string {
    return STATUS_WORDS[key] ?? key.replace(/_/g, " ");
}

// Keyed by the enum: a reason the API adds and the legend lacks fails the type check.
const REASON_SET: Record<TimelineReason, true> = {
    not_yet_fired: true,
    misfire: true,
    catchup_limit: true,
    compressed: true,
    concurrency_limit: true,
    rate_limited: true,
    debounced: true,
    dst_policy: true,
    dst_gap: true,
    dst_repeat: true,
    paused: true,
    before_start: true,
    temporal_unavailable: true,
    overlap_skipped: true,
    holiday: true,
    weekend: true,
    blackout: true,
    rolled: true,
    beyond_coverage: true,
};
/** Every run status (kept with the filters that check them) and every timeline reason the API has, in legend order. */
export { RUN_STATUSES };
export const TIMELINE_REASONS = Object.keys(REASON_SET) as TimelineReason[];
