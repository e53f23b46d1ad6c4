// What each list view asks the API for, read from the view's address: the
// filters in the URL's query, checked, and the API query they make. No DOM
// and no runtime import, so that it runs under `node --test`.
import type { QueryOf, Schemas } from "./client";

export type RunStatus = Schemas["RunStatus"];
export type RunTrigger = Schemas["RunTrigger"];
export type AlertKind = Schemas["AlertKind"];

// Records keyed by the enums: a value the API adds and these lack fails the type check.
const RUN_STATUS_SET: Record<RunStatus, true> = {
    queued: true,
    running: true,
    succeeded: true,
    failed: true,
    cancelled: true,
    timed_out: true,
    skipped: true,
};
const RUN_TRIGGER_SET: Record<RunTrigger, true> = { cron: true, interval: true, event: true, manual: true };
const ALERT_KIND_SET: Record<AlertKind, true> = { late_start: true, stuck: true, failure_streak: true, missed_fire: true, calendar_coverage: true };

/** Every run status, in legend order. */
export const RUN_STATUSES = Object.keys(RUN_STATUS_SET) as RunStatus[];
export const RUN_TRIGGERS = Object.keys(RUN_TRIGGER_SET) as RunTrigger[];
export const ALERT_KINDS = Object.keys(ALERT_KIND_SET) as AlertKind[];
/** The trigger kinds of an activity definition. */
export const ACTIVITY_KINDS = ["cron", "interval", "event"] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

function oneOf<T extends string>(v: string | null, set: readonly T[]): T | undefined {
    return v !== null && (set as readonly string[]).includes(v) ? (v as T) : undefined;
}

/** One page of a keyset-paged list: `limit` items after `cursor` (none for the first page). */
export function pageQuery(cursor: string | null | undefined, limit = 50): { limit: number; cursor?: string } {
    return cursor ? { limit, cursor } : { limit };
}

/** The runs list's filter (`/runs?status=&trigger=&activity=&from=&to=`). */
export interface RunFilter {
    status?: RunStatus;
    trigger_type?: RunTrigger;
    activity_id?: string;
    scheduled_after?: string;
    scheduled_before?: string;
}

/** The filter of `/runs`; a status or trigger the API does not know is left out. */
export function runFilterOf(q: URLSearchParams): RunFilter {
    const out: RunFilter = {};
    const status = oneOf(q.get("status"), RUN_STATUSES);
    if (status) out.status = status;
    const trigger = oneOf(q.get("trigger"), RUN_TRIGGERS);
    if (trigger) out.trigger_type = trigger;
    const a = q.get("activity");
    if (a) out.activity_id = a;
    const from = q.get("from");
    if (from) out.scheduled_after = from;
    const to = q.get("to");
    if (to) out.scheduled_before = to;
    return out;
}

export function runsQuery(f: RunFilter, cursor: string | null | undefined, limit = 50): QueryOf<"list_runs"> {
    return { ...f, ...pageQuery(cursor, limit) };
}

export type BulkKind = "retry" | "cancel";

/** What a bulk action asks each activity for: the filter without the activity (the path names it). */
export function bulkFilterOf(f: RunFilter): Omit<RunFilter, "activity_id"> {
    const { activity_id: _, ...rest } = f;
    return rest;
}

/** The statuses a bulk action can act on that the filter lets through (none: nothing matches). */
export function bulkStatuses(kind: BulkKind, f: RunFilter): RunStatus[] {
    const acted: RunStatus[] = kind === "retry" ? ["failed", "cancelled"] : ["running", "queued"];
    return f.status ? acted.filter((s) => s === f.status) : acted;
}

/** A bulk action's outcomes in words: "2 retried, 1 skipped". */
export function outcomeWords(outcomes: Map<string, number>): string {
    return [...outcomes].map(([k, v]) => `${v} ${k.replace(/_/g, " ")}`).join(", ") || "nothing matched";
}

/** The activities list's filter (`/activities?q=&label=&kind=`). */
export interface ActivityFilter {
    text: string;
    label: string;
    kind: ActivityKind | "";
}

export function activityFilterOf(q: URLSearchParams): ActivityFilter {
    return { text: q.get("q") ?? "", label: q.get("label") ?? "", kind: oneOf(q.get("kind"), ACTIVITY_KINDS) ?? "" };
}

export function activitiesQuery(f: ActivityFilter, cursor: string | null | undefined): QueryOf<"list_activities"> {
    return {
        include: "summary",
        ...(f.text ? { q: f.text } : {}),
        ...(f.label ? { label: f.label } : {}),
        ...(f.kind ? { trigger_type: f.kind } : {}),
        ...pageQuery(cursor),
    };
}

/** The alerts list's filter (`/alerts?state=&kind=&activity=`). */
export interface AlertFilter {
    state: "open" | "resolved" | "";
    kind: AlertKind | null;
    activity: string;
}

export function alertFilterOf(q: URLSearchParams): AlertFilter {
    return {
        state: oneOf(q.get("state"), ["open", "resolved"] as const) ?? "",
        kind: oneOf(q.get("kind"), ALERT_KINDS) ?? null,
        activity: q.get("activity") ?? "",
    };
}

export function alertsQuery(f: AlertFilter, cursor: string | null | undefined): QueryOf<"list_alerts"> {
    return {
        ...(f.state ? { state: f.state } : {}),
        ...(f.kind ? { kind: f.kind } : {}),
        ...(f.activity ? { activity_id: f.activity } : {}),
        ...pageQuery(cursor),
    };
}

/** The events list's filter (`/events?type=&source=`). */
export interface EventFilter {
    type: string;
    source: string;
}

export function eventFilterOf(q: URLSearchParams): EventFilter {
    return { type: q.get("type") ?? "", source: q.get("source") ?? "" };
}

export function eventsQuery(f: EventFilter, cursor: string | null | undefined): QueryOf<"list_events"> {
    return { ...(f.type ? { event_type: f.type } : {}), ...(f.source ? { source: f.source } : {}), ...pageQuery(cursor) };
}

/** The change stream's query: its token (when authentication is on) and the last change seen, to resume after it. */
export function streamQuery(token: string | null, since: string | null): string {
    const q = new URLSearchParams();
    if (token !== null) q.set("token", token);
    if (since !== null) q.set("since", since);
    return q.toString();
}
