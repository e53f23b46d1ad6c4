/** Sources, business calendars and notification subscriptions. */
import assert from "node:assert/strict";
import { it } from "node:test";
import { acp, ok, problem, state, suffix } from "../harness.js";

export function resourceFlows(): void {
    it("sources: create a NATS source, list, get, patch, rejected, delete", async () => {
        const created = await acp.POST("/v1/sources", {
            body: {
                name: `ts-nats-${suffix}`,
                kind: "nats",
                config: { url: "nats://127.0.0.1:4222", stream: "ACPTS", durable: "acp-ts" },
            },
        });
        const source = ok(created, 201);
        assert.equal(source.kind, "nats");
        assert.equal(source.enabled, true);
        assert.deepEqual(source.config, { url: "nats://127.0.0.1:4222", stream: "ACPTS", subject: null, durable: "acp-ts" });
        assert.ok(created.response.headers.get("location")?.endsWith(`/v1/sources/${source.id}`));
        const id = source.id;

        const list = ok(await acp.GET("/v1/sources", { params: { query: { limit: 100 } } }), 200);
        assert.ok(list.items.some((s) => s.id === id));
        const got = await acp.GET("/v1/sources/{id}", { params: { path: { id } } });
        assert.equal(ok(got, 200).name, source.name);
        const etag = got.response.headers.get("etag") ?? "";
        assert.ok(etag);

        const patched = ok(
            await acp.PATCH("/v1/sources/{id}", {
                params: { path: { id }, header: { "If-Match": etag } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { enabled: false },
            }),
            200,
        );
        assert.equal(patched.enabled, false);
        assert.equal(patched.version, source.version + 1);
        problem(
            await acp.PATCH("/v1/sources/{id}", {
                params: { path: { id }, header: { "If-Match": etag } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { enabled: true },
            }),
            412,
        );

        const rejected = ok(await acp.GET("/v1/sources/{id}/rejected", { params: { path: { id } } }), 200);
        assert.deepEqual(rejected.items, []);

        const deleted = await acp.DELETE("/v1/sources/{id}", { params: { path: { id } } });
        assert.equal(deleted.response.status, 204);
        problem(await acp.GET("/v1/sources/{id}", { params: { path: { id } } }), 404);
    });

    it("calendars: create, list, get, put, patch, days, import, delete", async () => {
        const created = await acp.POST("/v1/calendars", {
            body: {
                name: `ts-calendar-${suffix}`,
                holidays: [{ date: "2026-07-03", name: "Independence Day (observed)" }],
                working_days: [{ date: "2026-07-11", name: "Make-up day" }],
                covered_until: "2026-12-31",
            },
        });
        const calendar = ok(created, 201);
        const id = calendar.id;
        assert.deepEqual(calendar.weekend_days, [0, 6]);
        assert.ok(created.response.headers.get("location")?.endsWith(`/v1/calendars/${id}`));
        const list = ok(await acp.GET("/v1/calendars", { params: { query: { limit: 100 } } }), 200);
        assert.ok(list.items.some((c) => c.id === id));
        const got = await acp.GET("/v1/calendars/{id}", { params: { path: { id } } });
        assert.equal(ok(got, 200).name, calendar.name);
        const etag = got.response.headers.get("etag") ?? "";
        const replacement = {
            name: calendar.name,
            timezone: "America/New_York",
            holidays: calendar.holidays,
            working_days: calendar.working_days,
            covered_until: "2026-12-31",
        };
        const put = ok(
            await acp.PUT("/v1/calendars/{id}", { params: { path: { id }, header: { "If-Match": etag } }, body: replacement }),
            200,
        );
        assert.equal(put.version, calendar.version + 1);
        problem(
            await acp.PUT("/v1/calendars/{id}", { params: { path: { id }, header: { "If-Match": etag } }, body: replacement }),
            412,
        );
        const patched = ok(
            await acp.PATCH("/v1/calendars/{id}", {
                params: { path: { id }, header: { "If-Match": `"${put.version}"` } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { covered_until: "2027-01-31" },
            }),
            200,
        );
        assert.equal(patched.covered_until, "2027-01-31");
        const days = ok(
            await acp.GET("/v1/calendars/{id}/days", {
                params: { path: { id }, query: { from: "2026-07-03", to: "2026-07-11" } },
            }),
            200,
        );
        assert.equal(days.days[0]?.name, "Independence Day (observed)");
        assert.equal(days.days[0]?.business_day, false);
        assert.equal(days.days[8]?.kind, "working_day");

        const ics = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//ts//EN\r\nBEGIN:VEVENT\r\nUID:1\r\n" +
            "DTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas Day\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        const imported = ok(
            await acp.POST("/v1/calendars:import", {
                params: { query: { name: `ts-import-${suffix}` } },
                headers: { "content-type": "text/calendar" },
                body: ics,
                bodySerializer: (b: unknown) => String(b),
            }),
            201,
        );
        assert.equal(imported.events, 1);
        assert.equal(imported.calendar.holidays[0]?.name, "Christmas Day");

        for (const doomed of [id, imported.calendar.id]) {
            const deleted = await acp.DELETE("/v1/calendars/{id}", { params: { path: { id: doomed } } });
            assert.equal(deleted.response.status, 204);
        }
        problem(await acp.GET("/v1/calendars/{id}", { params: { path: { id } } }), 404);
    });

    it("subscriptions: create, list, get, deliveries, delete", async () => {
        const created = await acp.POST("/v1/subscriptions", {
            body: {
                url: "http://127.0.0.1:9/hook",
                types: ["run.failed", "alert.opened"],
                activity_id: state.activityId,
                description: "ts contract",
            },
        });
        const sub = ok(created, 201);
        assert.equal(sub.url, "http://127.0.0.1:9/hook");
        assert.deepEqual([...sub.types].sort(), ["alert.opened", "run.failed"]);
        assert.equal(sub.activity_id, state.activityId);
        const id = sub.id;

        const list = ok(await acp.GET("/v1/subscriptions", { params: { query: { limit: 100 } } }), 200);
        assert.ok(list.items.some((s) => s.id === id));
        assert.equal(ok(await acp.GET("/v1/subscriptions/{id}", { params: { path: { id } } }), 200).id, id);
        const deliveries = ok(await acp.GET("/v1/subscriptions/{id}/deliveries", { params: { path: { id } } }), 200);
        assert.ok(Array.isArray(deliveries.items));

        const deleted = await acp.DELETE("/v1/subscriptions/{id}", { params: { path: { id } } });
        assert.equal(deleted.response.status, 204);
        problem(await acp.GET("/v1/subscriptions/{id}", { params: { path: { id } } }), 404);
    });
}
