/** Runs: reads, run control, statistics, retention, the change stream and alerts. */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import type { Schemas } from "../../src/index.js";
import { acp, client, label, mediaType, ok, problem, state, suffix, until } from "../harness.js";

export function runFlows(): void {
    it("runs: get, list, and a finished run refuses cancel and retry with a 409", async () => {
        const run = ok(
            await until(
                "the event's run to succeed",
                () => acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: state.eventRunId } } }),
                (r) => r.data?.status === "succeeded",
            ),
            200,
        );
        assert.equal(run.trigger_type, "event");
        assert.equal(run.event_id, state.jsonEventId);
        assert.equal(run.tasks?.[0]?.status, "succeeded");

        const all = ok(await acp.GET("/v1/runs", { params: { query: { activity_id: state.eventActivityId, limit: 100 } } }), 200);
        assert.ok(all.items.some((r) => r.run_id === state.eventRunId));
        for (const r of all.items) assert.equal(r.activity_id, state.eventActivityId);
        const mine = ok(
            await acp.GET("/v1/activities/{id}/runs", { params: { path: { id: state.eventActivityId }, query: { trigger_type: "event" } } }),
            200,
        );
        assert.ok(mine.items.some((r) => r.run_id === state.eventRunId));

        const cancel = problem(
            await acp.POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: state.eventRunId } }, body: { reason: "too late" } }),
            409,
        );
        assert.match(`${cancel.detail ?? ""} ${cancel.title}`, /succeeded/);
        const retry = problem(await acp.POST("/v1/runs/{run_id}/retry", { params: { path: { run_id: state.eventRunId } } }), 409);
        assert.match(`${retry.detail ?? ""} ${retry.title}`, /succeeded/);
        problem(await acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: randomUUID() } } }), 404);
    });

    it("run control: cancel a waiting run, retry it, bulk cancel and bulk retry", async () => {
        // Its task is served by no worker, so its runs wait until cancelled.
        const waiting = ok(
            await acp.POST("/v1/activities", {
                body: {
                    name: `ts-waiting-${suffix}`,
                    labels: { suite: label },
                    trigger: { type: "interval", every: "PT1H", misfire_policy: "skip" },
                    tasks: [{ task_type: "ts_unserved", config: { task_queue: `ts-nobody-${suffix}` } }],
                },
            }),
            201,
        );
        const id = waiting.id;
        const started = ok(await acp.POST("/v1/activities/{id}/trigger", { params: { path: { id } } }), 202);
        const runId = started.run_id;
        const runStatus = (status: string) =>
            until(
                `run ${runId} to be ${status}`,
                () => acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } }),
                (r) => r.data?.status === status,
            );
        // A cancel is sent once the attempt's task has started. Sent sooner (a
        // cancel that reaches the run workflow before its first workflow task,
        // e.g. right after a retry on a busy machine), Temporal ends the
        // execution CANCELED but the run stays `running` in PostgreSQL: a
        // service bug this test does not try to trip over.
        const underway = (attempt: number) =>
            until(
                `attempt ${attempt} of run ${runId} to run its task`,
                () => acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } }),
                (r) =>
                    r.data?.status === "running" &&
                    r.data.attempt === attempt &&
                    r.data.tasks?.[0]?.status === "running" &&
                    r.data.tasks[0].run_attempt === attempt,
            );
        await underway(1);

        const cancelled = ok(
            await acp.POST("/v1/runs/{run_id}/cancel", {
                params: { path: { run_id: runId } },
                body: { reason: "contract test" },
            }),
            202,
        );
        assert.equal(cancelled.run_id, runId);
        const ended = ok(await runStatus("cancelled"), 200);
        assert.equal(ended.cancellation?.reason, "contract test");

        const retried = ok(await acp.POST("/v1/runs/{run_id}/retry", { params: { path: { run_id: runId } } }), 202);
        assert.equal(retried.attempt, 2);
        await underway(2);

        // A dry run names the run it would cancel, and cancels nothing.
        const wouldCancel = ok(
            await acp.POST("/v1/activities/{id}/runs/cancel", { params: { path: { id } }, body: { dry_run: true } }),
            200,
        );
        assert.equal(wouldCancel.dry_run, true);
        assert.deepEqual(
            wouldCancel.results.map((r) => [r.run_id, r.outcome]),
            [[runId, "matched"]],
        );
        const bulkCancel = ok(
            await acp.POST("/v1/activities/{id}/runs/cancel", { params: { path: { id } }, body: { reason: "bulk" } }),
            200,
        );
        assert.equal(bulkCancel.more, false);
        assert.deepEqual(
            bulkCancel.results.map((r) => [r.run_id, r.outcome === "cancel_requested" || r.outcome === "cancelled"]),
            [[runId, true]],
        );
        await runStatus("cancelled");

        const bulkRetry = ok(
            await acp.POST("/v1/activities/{id}/runs/retry", { params: { path: { id } }, body: { status: "cancelled" } }),
            200,
        );
        assert.deepEqual(
            bulkRetry.results.map((r) => [r.run_id, r.outcome, r.attempt]),
            [[runId, "retried", 3]],
        );
        await underway(3);

        // Leave nothing running: an empty body is allowed too.
        ok(await acp.POST("/v1/activities/{id}/runs/cancel", { params: { path: { id } } }), 200);
        const last = ok(await runStatus("cancelled"), 200);
        assert.equal(last.attempt, 3);
        assert.equal(last.attempts?.length, 3);
    });

    it("run statistics: buckets of the last day, and a named bad bucket", async () => {
        const stats = ok(await acp.GET("/v1/stats/runs", { params: { query: { bucket: "PT1H" } } }), 200);
        assert.equal(stats.bucket, "PT1H");
        assert.ok(stats.buckets.length >= 24);
        const total = stats.buckets.reduce((n, b) => n + b.total, 0);
        assert.ok(total > 0, "the runs made above are counted");
        for (const b of stats.buckets) {
            const c = b.counts;
            assert.equal(b.total, c.queued + c.running + c.succeeded + c.failed + c.cancelled + c.timed_out + c.skipped);
        }
        const bad = problem(await acp.GET("/v1/stats/runs", { params: { query: { bucket: "PT5M" } } }), 400);
        assert.ok(JSON.stringify(bad).includes("bucket"));
    });

    it("retention: the change log's partitions, today's among them, as a dry run", async () => {
        const retention = ok(await acp.GET("/v1/retention"), 200);
        const log = retention.tables.find((t) => t.table === "change_log");
        assert.ok(log, "the change log is listed");
        const now = Date.parse(retention.now);
        assert.ok(
            log.partitions.some((p) => Date.parse(p.from) <= now && now < Date.parse(p.to)),
            "a partition holds today",
        );
        for (const p of log.partitions) assert.ok(Date.parse(p.from) < Date.parse(p.to), p.name);
    });

    it("stream: a token, live changes, a reconnect with Last-Event-ID", async () => {
        const token = ok(await acp.POST("/v1/stream/tokens"), 201);
        assert.match(token.token, /^acps_[0-9a-f]{64}$/);
        // The token opens the stream without a header, and nothing else.
        problem(await client(token.token).GET("/v1/runs", {}), 401);

        /** Reads `count` events of a stream, then closes it. */
        async function read(answer: { response: Response }, count: number): Promise<{ id: number; kind: string; data: Schemas["ChangeEvent"] }[]> {
            assert.equal(answer.response.status, 200);
            assert.equal(mediaType(answer.response.headers.get("content-type")), "text/event-stream");
            const reader = answer.response.body!.pipeThrough(new TextDecoderStream()).getReader();
            const events: { id: number; kind: string; data: Schemas["ChangeEvent"] }[] = [];
            let text = "";
            while (events.length < count) {
                const { value, done } = await reader.read();
                if (done) break;
                text += value;
                let end: number;
                while ((end = text.indexOf("\n\n")) >= 0) {
                    const block = text.slice(0, end);
                    text = text.slice(end + 2);
                    const field = (name: string) =>
                        block.split("\n").find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim();
                    const data = field("data");
                    if (data !== undefined) {
                        events.push({ id: Number(field("id")), kind: field("event") ?? "", data: JSON.parse(data) });
                    }
                }
            }
            await reader.cancel();
            return events;
        }
        const anonymous = client();
        const first = await read(
            await anonymous.GET("/v1/stream", { params: { query: { since: 0, token: token.token } }, parseAs: "stream" }),
            3,
        );
        const [a, b, c] = first;
        assert.ok(a !== undefined && b !== undefined && c !== undefined, "three events");
        assert.deepEqual(first.map((e) => e.id), first.map((e) => e.data.seq));
        assert.ok(a.id < b.id && b.id < c.id);
        // Resume after the second: the third comes again, nothing before it.
        const again = await read(
            await acp.GET("/v1/stream", {
                params: { header: { "Last-Event-ID": String(b.id) }, query: { kinds: "activity,run" } },
                parseAs: "stream",
            }),
            1,
        );
        const next = again[0];
        assert.ok(next !== undefined && next.id > b.id);
        assert.ok(next.kind.startsWith("activity.") || next.kind.startsWith("run."));
        problem(await acp.GET("/v1/stream", { params: { query: { kinds: "weather" } }, parseAs: "stream" }), 400);
    });

    it("alerts: list, and a 404 for an unknown one", async () => {
        const alerts = ok(await acp.GET("/v1/alerts", { params: { query: { state: "open", limit: 10 } } }), 200);
        assert.ok(Array.isArray(alerts.items));
        problem(await acp.GET("/v1/alerts/{id}", { params: { path: { id: randomUUID() } } }), 404);
    });
}
