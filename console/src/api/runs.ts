// The runs' calls: the list and one run as hooks, retry and cancel (of one
// run, or of every run a filter matches) as functions.
import { useAsync, type Async } from "../ui";
import { acp, ApiError, unwrap, type Run, type Schemas } from "./client";
import { bulkFilterOf, bulkStatuses, runsQuery, type BulkKind, type RunFilter } from "./query";

export type BulkSample = Pick<Schemas["BulkRunResult"], "run_id" | "scheduled_for" | "workflow_id">;

/** What a bulk action would act on, per activity. */
export interface BulkCount {
    byActivity: Map<string, number>;
    total: number;
    /** More match than one request acts on (or than the list was read for). */
    capped: boolean;
    sample: BulkSample[];
    /** Counted by each activity's dry run (else from the list). */
    exact: boolean;
}

/** The most runs read from the list to count them when the service has no dry run. */
const MAX_COUNT = 1000;

export function useRuns(f: RunFilter, cursor: string): Async<Schemas["Page_RunResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/runs", { params: { query: runsQuery(f, cursor) } })), [JSON.stringify(f), cursor]);
}

export function useRun(id: string): Async<Run> {
    return useAsync(() => unwrap(acp().GET("/v1/runs/{run_id}", { params: { path: { run_id: id } } })), [id]);
}

export function retryRun(runId: string): Promise<Schemas["RetryRunResponse"]> {
    return unwrap(acp().POST("/v1/runs/{run_id}/retry", { params: { path: { run_id: runId } } }));
}

export type CancelRunResult = Schemas["CancelRunResponse"];

export function cancelRun(runId: string, reason: string, force: boolean): Promise<CancelRunResult> {
    return unwrap(acp().POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: runId } }, body: { reason: reason || null, force } }));
}

/** One request of a bulk action on one activity's runs that `f` matches (or its dry run). */
function bulkOnce(kind: BulkKind, activityId: string, f: RunFilter, reason: string, dryRun: boolean): Promise<Schemas["BulkRunsResponse"]> {
    const filter = bulkFilterOf(f);
    // `dry_run` only when asked: a service without it refuses the field.
    const d = dryRun ? { dry_run: true } : {};
    const path = { path: { id: activityId } };
    return kind === "retry"
        ? unwrap(acp().POST("/v1/activities/{id}/runs/retry", { params: path, body: { ...filter, ...d } }))
        : unwrap(acp().POST("/v1/activities/{id}/runs/cancel", { params: path, body: { ...filter, force: false, reason: reason || null, ...d } }));
}

/** Counts the runs a bulk action on `f` would act on (read once, when the dialog opens). */
export function useBulkCount(kind: BulkKind, f: RunFilter): Async<BulkCount> {
    return useAsync(async () => {
        // The runs the list names for this filter: which activities, and a count
        // when the service has no dry run of bulk actions.
        const listed = new Map<string, number>();
        const listedSample: BulkSample[] = [];
        let seen = 0;
        for (const status of bulkStatuses(kind, f)) {
            let cursor: string | undefined;
            do {
                const page: Schemas["Page_RunResponse"] = await unwrap(acp().GET("/v1/runs", { params: { query: runsQuery({ ...f, status }, cursor, 200) } }));
                for (const r of page.items) {
                    listed.set(r.activity_id, (listed.get(r.activity_id) ?? 0) + 1);
                    if (listedSample.length < 10) listedSample.push(r);
                }
                seen += page.items.length;
                cursor = page.next_cursor ?? undefined;
            } while (cursor && seen < MAX_COUNT);
        }
        // Each activity's dry run names exactly the runs the request would act on.
        const byActivity = new Map<string, number>();
        const sample: BulkSample[] = [];
        let total = 0;
        let capped = false;
        try {
            for (const id of f.activity_id ? [f.activity_id] : listed.keys()) {
                const r = await bulkOnce(kind, id, f, "", true);
                if (r.results.length === 0) continue;
                byActivity.set(id, r.results.length);
                total += r.results.length;
                capped ||= r.more;
                sample.push(...r.results.slice(0, Math.max(0, 10 - sample.length)));
            }
        } catch (e) {
            // A service without the dry run refuses the field: count from the list instead.
            if (!(e instanceof ApiError && e.status === 400)) throw e;
            return { byActivity: listed, total: seen, capped: seen >= MAX_COUNT, sample: listedSample, exact: false };
        }
        return { byActivity, total, capped, sample, exact: true };
    }, []);
}

/**
 * The bulk action on each of `activityIds`' runs that `f` matches, repeated
 * while the service says more match (at most 20 requests an activity); the
 * count of each outcome.
 */
export async function bulkAct(kind: BulkKind, activityIds: Iterable<string>, f: RunFilter, reason: string): Promise<Map<string, number>> {
    const outcomes = new Map<string, number>();
    for (const id of activityIds) {
        for (let round = 0; round < 20; round++) {
            const r = await bulkOnce(kind, id, f, reason, false);
            for (const x of r.results) outcomes.set(x.outcome, (outcomes.get(x.outcome) ?? 0) + 1);
            if (!r.more) break;
        }
    }
    return outcomes;
}
