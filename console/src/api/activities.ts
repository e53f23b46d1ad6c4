// The activities' calls outside the activity page: the list, the names other
// lists show, the sparkline's hourly counts, and the definition form's read
// and writes.
import { useAsync, type Async } from "../ui";
import { acp, ApiError, problemText, unwrap, type Activity, type Schemas } from "./client";
import { activitiesQuery, type ActivityFilter } from "./query";

export type ActivityRequest = Schemas["ActivityRequest"];

/** An activity's definition and its ETag (sent back as If-Match on save). */
export interface Definition {
    activity: Activity;
    etag: string | null;
}

export function useActivities(f: ActivityFilter, cursor: string): Async<Schemas["Page_ActivityResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/activities", { params: { query: activitiesQuery(f, cursor) } })), [f.text, f.label, f.kind, cursor]);
}

/** The first 200 activities and their names by ID, for the views that show runs, alerts or dispatches and filter by activity. */
export function useActivityIndex(): { list: Activity[]; names: Map<string, string> } {
    const acts = useAsync(() => unwrap(acp().GET("/v1/activities", { params: { query: { limit: 200 } } })), []);
    const list = acts.data?.items ?? [];
    return { list, names: new Map(list.map((a) => [a.id, a.name])) };
}

/** The activity `id` (when known), or null when it cannot be read: its name and zone are a nicety. */
export function useActivityOrNull(id: string | undefined): Async<Activity | null> {
    return useAsync(async () => (id ? unwrap(acp().GET("/v1/activities/{id}", { params: { path: { id } } })).catch(() => null) : null), [id]);
}

/** The last 24 hours of `id`'s runs by hour; `tick` changes to refresh. */
export function useHourlyStats(id: string, tick: string): Async<Schemas["RunStatsResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/stats/runs", { params: { query: { activity_id: id, bucket: "PT1H" } } })), [id, tick]);
}

/** The definition to edit (null for a new activity). */
export function useDefinition(id: string | undefined): Async<Definition | null> {
    return useAsync(async () => {
        if (!id) return null;
        const { data, error, response } = await acp().GET("/v1/activities/{id}", { params: { path: { id } } });
        if (!data) throw new ApiError(problemText(error, response), response.status, error);
        return { activity: data, etag: response.headers.get("etag") };
    }, [id]);
}

export function createActivity(req: ActivityRequest): Promise<Activity> {
    return unwrap(acp().POST("/v1/activities", { body: req }));
}

/** Replaces `base`'s definition, only if it is still the version read (its ETag). */
export function updateActivity(base: Definition, req: ActivityRequest): Promise<Activity> {
    return unwrap(
        acp().PUT("/v1/activities/{id}", {
            params: { path: { id: base.activity.id }, header: base.etag ? { "If-Match": base.etag } : {} },
            body: req,
        }),
    );
}
