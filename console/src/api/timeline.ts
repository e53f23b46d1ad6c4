import { acp, ApiError, problemText, type Run, type Schemas } from "./client";

export type Entry = Schemas["TimelineEntry"];

/** Every entry of `[from, to)`, fetched in chunks of at most ~900 times (the API answers 1000 at most). */
export async function fetchTimeline(id: string, from: number, to: number, rate: number): Promise<Entry[]> {
    const chunk = Math.max(60_000, Math.floor((990 / Math.max(rate, 1e-9)) * 1000));
    const ranges: [number, number][] = [];
    for (let a = from; a < to; a += chunk) ranges.push([a, Math.min(to, a + chunk)]);
    const one = async (a: number, b: number): Promise<Entry[]> => {
        const { data, error, response } = await acp().GET("/v1/activities/{id}/timeline", {
            params: { path: { id }, query: { from: new Date(a).toISOString(), to: new Date(b).toISOString() } },
        });
        if (data) return data.items;
        if (response.status === 422 && b - a > 2000) {
            const mid = a + Math.floor((b - a) / 2000) * 1000;
            const [x, y] = await Promise.all([one(a, mid), one(mid, b)]);
            return x.concat(y);
        }
        throw new ApiError(problemText(error, response), response.status, error);
    };
    const out: Entry[][] = new Array(ranges.length);
    let next = 0;
    const worker = async () => {
        while (next < ranges.length) {
            const i = next++;
            const [a, b] = ranges[i]!;
            out[i] = await one(a, b);
        }
    };
    // Five at a time: a browser opens six connections per host, and the change stream holds one.
    await Promise.all([worker(), worker(), worker(), worker(), worker()]);
    return out.flat();
}

/** One run, for the timeline's tooltip; undefined when it cannot be read. */
export async function getRun(runId: string): Promise<Run | undefined> {
    const { data } = await acp().GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } });
    return data;
}
