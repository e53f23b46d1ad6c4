/** The activity definition flows: health and keys, preview, create, replace, patch, pause and resume, a manual trigger, backfill and the timeline. */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { acp, client, cronActivity, cronTrigger, fiveMinuteFloor, label, ok, problem, state, suffix, until } from "../harness.js";

export function activityFlows(): void {
    it("health: /healthz, /readyz, /metrics (no key needed)", async () => {
        const open = client();
        const health = ok(await open.GET("/healthz"), 200);
        assert.equal(typeof health.status, "string");
        const ready = ok(await open.GET("/readyz"), 200);
        assert.equal(ready.status, "ready", JSON.stringify(ready));
        assert.equal(ready.postgres.status, "up", JSON.stringify(ready));
        assert.equal(ready.temporal.status, "up", JSON.stringify(ready));
        assert.ok(Array.isArray(ready.duties));
        const metrics = ok(await open.GET("/metrics", { parseAs: "text" }), 200);
        assert.match(metrics, /^# (HELP|TYPE) /m);
        assert.match(metrics, /acp_/);
    });

    it("authentication: no token is a 401 problem, the admin token reads", async () => {
        problem(await client().GET("/v1/activities"), 401);
        problem(await client("acp_not_a_key").GET("/v1/activities"), 401);
    });

    it("preview a cron trigger", async () => {
        const preview = ok(
            await acp.POST("/v1/schedules/preview", { params: { query: { count: 5 } }, body: { trigger: cronTrigger } }),
            200,
        );
        assert.equal(preview.next.length, 5);
        const times = preview.next.map((t) => Date.parse(t.at));
        for (let i = 0; i < times.length; i++) {
            assert.ok(!Number.isNaN(times[i]), `preview time ${preview.next[i]?.at}`);
            assert.equal(new Date(times[i]!).getUTCMinutes() % 5, 0, "*/5 fires on multiples of five minutes");
            if (i > 0) assert.ok(times[i]! > times[i - 1]!, "preview times increase");
        }
        // An invalid cron is a 422 naming the field.
        const bad = problem(
            await acp.POST("/v1/schedules/preview", { body: { trigger: { ...cronTrigger, cron: "*/5 * *" } } }),
            422,
        );
        assert.ok(
            (bad.errors ?? []).some((e) => JSON.stringify(e).includes("trigger.cron")),
            `422 names trigger.cron: ${JSON.stringify(bad)}`,
        );
    });

    it("create a cron activity (Idempotency-Key replays), list, get", async () => {
        const key = `ts-create-${suffix}`;
        const body = cronActivity(`ts-cron-${suffix}`);
        const first = await acp.POST("/v1/activities", { params: { header: { "Idempotency-Key": key } }, body });
        const created = ok(first, 201);
        state.activityId = created.id;
        assert.equal(created.name, body.name);
        assert.equal(created.trigger.type, "cron");
        assert.ok(created.trigger.type === "cron", "a cron trigger");
        assert.equal(created.trigger.timezone, "Europe/Berlin");
        assert.equal(created.trigger.misfire_policy, "skip");
        assert.equal(created.tasks[0]?.task_type, "noop");
        assert.equal(created.paused, false);
        assert.ok(["synced", "pending"].includes(created.schedule.sync_state), created.schedule.sync_state);
        assert.ok(first.response.headers.get("etag"), "201 carries an ETag");
        assert.ok(first.response.headers.get("location")?.endsWith(`/v1/activities/${created.id}`), "Location names it");

        const replay = ok(
            await acp.POST("/v1/activities", { params: { header: { "Idempotency-Key": key } }, body }),
            201,
        );
        assert.equal(replay.id, created.id, "the same Idempotency-Key and body replay the first answer");

        const list = ok(
            await acp.GET("/v1/activities", { params: { query: { label: `suite=${label}`, trigger_type: "cron", limit: 50 } } }),
            200,
        );
        assert.deepEqual(
            list.items.map((a) => a.id),
            [created.id],
        );

        const got = await acp.GET("/v1/activities/{id}", { params: { path: { id: state.activityId } } });
        const activity = ok(got, 200);
        assert.equal(activity.id, state.activityId);
        assert.equal(activity.version, created.version);
        state.activityEtag = got.response.headers.get("etag") ?? "";
        assert.ok(state.activityEtag, "GET carries an ETag");

        problem(await acp.GET("/v1/activities/{id}", { params: { path: { id: randomUUID() } } }), 404);
    });

    it("PUT creates with a chosen UUID, then replaces under If-Match; a stale one is 412", async () => {
        const id = randomUUID();
        const body = cronActivity(`ts-put-${suffix}`);
        const created = await acp.PUT("/v1/activities/{id}", { params: { path: { id } }, body });
        assert.equal(ok(created, 201).id, id);
        const etag = created.response.headers.get("etag") ?? "";
        assert.ok(etag);

        const replaced = await acp.PUT("/v1/activities/{id}", {
            params: { path: { id }, header: { "If-Match": etag } },
            body: { ...body, description: "replaced" },
        });
        const after = ok(replaced, 200);
        assert.equal(after.description, "replaced");
        assert.ok(after.version > 1, `version ${after.version}`);
        assert.notEqual(replaced.response.headers.get("etag"), etag);

        problem(
            await acp.PUT("/v1/activities/{id}", { params: { path: { id }, header: { "If-Match": etag } }, body }),
            412,
        );

        const gone = await acp.DELETE("/v1/activities/{id}", {
            params: { path: { id }, header: { "If-Match": replaced.response.headers.get("etag") ?? "" } },
        });
        assert.equal(gone.response.status, 204);
        problem(await acp.GET("/v1/activities/{id}", { params: { path: { id } } }), 404);
    });

    it("PATCH is a merge patch under If-Match", async () => {
        const patched = await acp.PATCH("/v1/activities/{id}", {
            params: { path: { id: state.activityId }, header: { "If-Match": state.activityEtag } },
            headers: { "content-type": "application/merge-patch+json" },
            body: { description: "patched by the TypeScript client", labels: { suite: label, patched: "yes" } },
        });
        const activity = ok(patched, 200);
        assert.equal(activity.description, "patched by the TypeScript client");
        assert.equal(activity.labels["patched"], "yes");
        assert.ok(activity.trigger.type === "cron", "a cron trigger");
        assert.equal(activity.trigger.cron, "*/5 * * * *", "fields not in the patch stay");
        const stale = state.activityEtag;
        state.activityEtag = patched.response.headers.get("etag") ?? "";
        assert.ok(state.activityEtag && state.activityEtag !== stale, "a new ETag");

        problem(
            await acp.PATCH("/v1/activities/{id}", {
                params: { path: { id: state.activityId }, header: { "If-Match": stale } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { description: "lost update" },
            }),
            412,
        );
    });

    it("pause and resume without a body; the live schedule shows it", async () => {
        const paused = ok(await acp.POST("/v1/activities/{id}/pause", { params: { path: { id: state.activityId } } }), 200);
        assert.equal(paused.paused, true);
        assert.equal(paused.activity_id, state.activityId);
        const schedule = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: state.activityId } } }), 200);
        assert.equal(schedule.paused, true);
        assert.equal(schedule.schedule_id, `activity-${state.activityId}`);

        // A dry run answers what a resume would do and leaves it paused.
        const dry = ok(
            await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: state.activityId } }, body: { dry_run: true } }),
            200,
        );
        assert.equal(dry.dry_run, true);
        assert.equal(dry.paused, true);
        assert.ok(dry.missed, "a paused activity's dry run answers its missed times");
        const still = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: state.activityId } } }), 200);
        assert.equal(still.paused, true);

        const resumed = ok(await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: state.activityId } } }), 200);
        assert.equal(resumed.paused, false);
        assert.equal(resumed.dry_run, false);

        // With a body, the note arrives.
        const noted = ok(
            await acp.POST("/v1/activities/{id}/pause", { params: { path: { id: state.activityId } }, body: { note: "maintenance" } }),
            200,
        );
        assert.equal(noted.note, "maintenance");
        ok(await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: state.activityId } }, body: { note: "done" } }), 200);
        const live = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: state.activityId } } }), 200);
        assert.equal(live.paused, false);
        assert.ok(live.next_fire_times.length > 0);
    });

    it("trigger: one manual run per Idempotency-Key", async () => {
        const key = `ts-trigger-${suffix}`;
        const started = ok(
            await acp.POST("/v1/activities/{id}/trigger", {
                params: { path: { id: state.activityId }, header: { "Idempotency-Key": key } },
            }),
            202,
        );
        assert.equal(started.key, key);
        assert.equal(started.workflow_id, `activity-${state.activityId}:manual-${key}`);
        const again = ok(
            await acp.POST("/v1/activities/{id}/trigger", {
                params: { path: { id: state.activityId }, header: { "Idempotency-Key": key } },
            }),
            200,
        );
        assert.equal(again.run_id, started.run_id);
        const run = await until(
            "the manual run to succeed",
            () => acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: started.run_id } } }),
            (r) => r.data?.status === "succeeded",
        );
        const done = ok(run, 200);
        assert.equal(done.trigger_type, "manual");
        assert.equal(done.tasks_succeeded, 1);
    });

    it("backfill (dry run) and the timeline", async () => {
        const end = fiveMinuteFloor();
        const start = new Date(end.getTime() - 3600_000);
        const backfill = ok(
            await acp.POST("/v1/activities/{id}/backfill", {
                params: { path: { id: state.activityId } },
                body: { start: start.toISOString(), end: end.toISOString(), dry_run: true },
            }),
            200,
        );
        assert.equal(backfill.dry_run, true);
        assert.equal(backfill.times.length, 12, "twelve */5 times in [start, end)");
        assert.equal(Date.parse(backfill.times[0]!.scheduled_for), start.getTime());
        assert.equal(backfill.next_start ?? null, null);

        const timeline = ok(
            await acp.GET("/v1/activities/{id}/timeline", {
                params: {
                    path: { id: state.activityId },
                    query: { from: start.toISOString(), to: new Date(end.getTime() + 3600_000).toISOString() },
                },
            }),
            200,
        );
        assert.equal(timeline.items.length, 24);
        for (const entry of timeline.items) {
            assert.ok(entry.workflow_id.startsWith(`activity-${state.activityId}:`), entry.workflow_id);
        }
        problem(
            await acp.GET("/v1/activities/{id}/timeline", {
                params: { path: { id: state.activityId }, query: { from: end.toISOString(), to: start.toISOString() } },
            }),
            400,
            422,
        );
    });
}
