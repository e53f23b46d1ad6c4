// The activity page's calls: reads as hooks (reloaded when their inputs
// change), writes as functions the page hands to its dialogs as callbacks.
import { useAsync, type Async } from "../ui";
import { acp, ApiError, problemText, unwrap, type Activity, type Schemas } from "./client";

export type Missed = Schemas["MissedTimes"];
export type PauseResult = Schemas["PauseResponse"];
export type BackfillResult = Schemas["BackfillResponse"];
export type TriggerResult = Schemas["TriggerResponse"];

/** The activity with its summary, and its ETag. */
export function useActivity(id: string): Async<{ a: Activity; etag: string | null }> {
    return useAsync(async () => {
        const { data, error, response } = await acp().GET("/v1/activities/{id}", { params: { path: { id }, query: { include: "summary" } } });
        if (!data) throw new ApiError(problemText(error, response), response.status, error);
        return { a: data, etag: response.headers.get("etag") };
    }, [id]);
}

export function useRecentRuns(id: string, tick: number) {
    return useAsync(() => unwrap(acp().GET("/v1/activities/{id}/runs", { params: { path: { id }, query: { limit: 15 } } })), [id, tick]);
}

export function useActivityAlerts(id: string, tick: number) {
    return useAsync(() => unwrap(acp().GET("/v1/alerts", { params: { query: { activity_id: id, limit: 10 } } })), [id, tick]);
}

/** Runs per UTC day of `year`; refreshed on every fifth change. */
export function useDailyStats(id: string, year: number, tick: number) {
    return useAsync(
        () =>
            unwrap(
                acp().GET("/v1/stats/runs", {
                    params: { query: { activity_id: id, bucket: "P1D", from: `${year}-01-01T00:00:00Z`, to: `${year + 1}-01-01T00:00:00Z` } },
                }),
            ),
        [id, year, Math.floor(tick / 5)],
    );
}

/**
 * What resuming would do, from the API's dry run: the missed times, null when
 * none was missed, undefined when this API version has no dry run.
 */
export function useResumeDryRun(id: string): Async<Missed | null | undefined> {
    return useAsync(async () => {
        const body = { dry_run: true } as unknown as Schemas["PauseRequest"];
        const { data, response } = await acp().POST("/v1/activities/{id}/resume", { params: { path: { id } }, body });
        if (data && response.ok) return data.missed ?? null;
        return undefined;
    }, [id]);
}

export function triggerNow(id: string): Promise<TriggerResult> {
    return unwrap(acp().POST("/v1/activities/{id}/trigger", { params: { path: { id } } }));
}

export function pause(id: string, note: string): Promise<PauseResult> {
    return unwrap(acp().POST("/v1/activities/{id}/pause", { params: { path: { id } }, body: { note: note || null } }));
}

export function resume(id: string, note: string): Promise<PauseResult> {
    return unwrap(acp().POST("/v1/activities/{id}/resume", { params: { path: { id } }, body: { note: note || null } }));
}

/** Backfill of `[start, end)` (instants, ISO), or its dry run. */
export function backfill(id: string, start: string, end: string, dryRun: boolean): Promise<BackfillResult> {
    return unwrap(acp().POST("/v1/activities/{id}/backfill", { params: { path: { id } }, body: { start, end, dry_run: dryRun } }));
}

export function remove(id: string): Promise<unknown> {
    return unwrap(acp().DELETE("/v1/activities/{id}", { params: { path: { id }, header: {} } }));
}
