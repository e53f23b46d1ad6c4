/** Events: JSON, batches and CloudEvents in every mode, with their dispatches. */
import assert from "node:assert/strict";
import { it } from "node:test";
import type { Schemas } from "../../src/index.js";
import { acp, contract, dynamicCall, eventType, headerParameters, label, ok, operations, problem, requestMediaTypes, state, suffix, type Json } from "../harness.js";

export function eventFlows(): void {
    it("an event activity, POST /v1/events (JSON), a duplicate, a conflict", async () => {
        const created = ok(
            await acp.POST("/v1/activities", {
                body: {
                    name: `ts-event-${suffix}`,
                    labels: { suite: label },
                    trigger: { type: "event", event_types: [eventType] },
                    tasks: [{ task_type: "noop" }],
                },
            }),
            201,
        );
        state.eventActivityId = created.id;
        assert.equal(created.schedule.sync_state, "not_applicable");

        state.jsonEventId = `ts-json-${suffix}`;
        const event: Schemas["EventRequest"] = {
            event_id: state.jsonEventId,
            event_type: eventType,
            source: "ts-contract",
            payload: { order: 1, customer: "c-1" },
        };
        // Prefer: wait starts the run within the request, so its outcome is known.
        const first = await acp.POST("/v1/events", { params: { header: { Prefer: "wait=10" } }, body: event });
        const ingested = ok(first, 200, 202);
        assert.equal(ingested.dispatches[0]?.outcome, "started", JSON.stringify(ingested));
        assert.equal(ingested.event_id, state.jsonEventId);
        assert.equal(ingested.event_id_origin, "client");
        assert.equal(ingested.dispatches.length, 1);
        const dispatch = ingested.dispatches[0]!;
        assert.equal(dispatch.activity_id, state.eventActivityId);
        assert.equal(dispatch.workflow_id, `activity-${state.eventActivityId}:${state.jsonEventId}`);
        state.eventRunId = dispatch.run_id;

        const duplicate = ok(await acp.POST("/v1/events", { body: event }), 200, 202);
        assert.equal(duplicate.dispatches[0]?.outcome, "duplicate");

        const conflict = problem(
            await acp.POST("/v1/events", { body: { ...event, payload: { order: 2 } } }),
            409,
        );
        assert.match(conflict.type, /event-conflict/);
    });

    it("POST /v1/events:batch", async () => {
        const batch = ok(
            await acp.POST("/v1/events:batch", {
                body: {
                    events: [
                        { event_id: `ts-batch-1-${suffix}`, event_type: eventType, source: "ts-contract", payload: { n: 1 } },
                        { event_id: `ts-batch-2-${suffix}`, event_type: eventType, source: "ts-contract", payload: { n: 2 } },
                        { event_type: eventType, source: "", payload: {} },
                    ],
                },
            }),
            200,
        );
        assert.deepEqual(
            batch.items.map((i) => i.index),
            [0, 1, 2],
        );
        for (const item of batch.items.slice(0, 2)) {
            assert.ok([200, 202].includes(item.status), JSON.stringify(item));
            assert.equal(item.result?.dispatches.length, 1);
        }
        const bad = batch.items[2]!;
        assert.equal(bad.status, 422, JSON.stringify(bad));
        assert.ok(
            (bad.problem?.errors ?? []).some((e) => JSON.stringify(e).includes("events[2]")),
            `the problem names events[2]: ${JSON.stringify(bad.problem)}`,
        );
    });

    it("CloudEvents: structured, batch and binary mode, wherever the document takes them", async () => {
        const structured = [...operations.values()].filter((op) =>
            requestMediaTypes(op).includes("application/cloudevents+json"),
        );
        const batch = [...operations.values()].filter((op) =>
            requestMediaTypes(op).includes("application/cloudevents-batch+json"),
        );
        const binary = [...operations.values()].filter((op) => headerParameters(op).includes("ce-specversion"));
        assert.ok(structured.length > 0, "some operation takes application/cloudevents+json");

        for (const op of structured) {
            const id = `ts-ce-${suffix}-${op.method}`;
            const cloudEvent: Schemas["CloudEventRequest"] = {
                specversion: "1.0",
                id,
                source: "ts-contract",
                type: eventType,
                time: new Date().toISOString(),
                datacontenttype: "application/json",
                data: { order: 3 },
            };
            const answer = await dynamicCall(op, {
                body: cloudEvent,
                headers: { "content-type": "application/cloudevents+json" },
            });
            const result = ok(answer, 200, 202) as Schemas["IngestResponse"];
            assert.equal(result.event_id, `ce:ts-contract:${id}`);
            assert.equal(result.event_id_origin, "cloudevent");
            assert.equal(result.dispatches[0]?.activity_id, state.eventActivityId);
        }
        for (const op of batch) {
            const events: Schemas["CloudEventRequest"][] = [1, 2].map((n) => ({
                specversion: "1.0",
                id: `ts-ceb-${suffix}-${n}`,
                source: "ts-contract",
                type: eventType,
                data: { n },
            }));
            const answer = await dynamicCall(op, {
                body: events,
                headers: { "content-type": "application/cloudevents-batch+json" },
            });
            const result = ok(answer, 200) as Schemas["BatchResponse"];
            assert.equal(result.items.length, 2);
            for (const item of result.items) assert.ok([200, 202].includes(item.status), JSON.stringify(item));
        }
        // Binary mode: the ce-* headers carry the attributes, the body is the
        // data in whichever media type the operation declares for it.
        const binaryData: Record<string, { body: unknown; serialize: (b: unknown) => unknown; payload: Json }> = {
            "application/octet-stream": {
                body: new Uint8Array([0xff, 0x00, 0x01]),
                serialize: (b) => b,
                payload: { data_base64: "/wAB" },
            },
            "text/plain": { body: "binary mode data", serialize: (b) => String(b), payload: "binary mode data" },
            "application/json": { body: { order: 4 }, serialize: (b) => JSON.stringify(b), payload: { order: 4 } },
        };
        for (const op of binary) {
            const media = requestMediaTypes(op).filter((m) => !m.startsWith("application/cloudevents"));
            assert.ok(media.length > 0, `${op.key} takes ce-* headers but declares no media type for the data`);
            for (const [i, m] of media.entries()) {
                const data = binaryData[m];
                assert.ok(data !== undefined, `${op.key}: binary-mode data as ${m} is not covered by this test`);
                const id = `ts-cebin-${suffix}-${i}`;
                const answer = await dynamicCall(op, {
                    params: {
                        header: { "ce-specversion": "1.0", "ce-id": id, "ce-source": "ts-contract", "ce-type": eventType },
                    },
                    headers: { "content-type": m },
                    body: data.body,
                    bodySerializer: data.serialize,
                });
                const result = ok(answer, 200, 202) as Schemas["IngestResponse"];
                assert.equal(result.event_id, `ce:ts-contract:${id}`);
                const stored = ok(
                    await acp.GET("/v1/events/{event_id}", { params: { path: { event_id: result.event_id } } }),
                    200,
                );
                assert.deepEqual(stored.payload, data.payload, `binary-mode data sent as ${m}`);
            }
        }
    });

    it("events: list and get, with their dispatches", async () => {
        const list = ok(await acp.GET("/v1/events", { params: { query: { event_type: eventType, limit: 100 } } }), 200);
        assert.ok(list.items.some((e) => e.event_id === state.jsonEventId), "the JSON event is listed");
        for (const e of list.items) assert.equal(e.event_type, eventType);
        const event = ok(await acp.GET("/v1/events/{event_id}", { params: { path: { event_id: state.jsonEventId } } }), 200);
        assert.deepEqual(event.payload, { order: 1, customer: "c-1" });
        assert.equal(event.dispatches?.[0]?.activity_id, state.eventActivityId);
        problem(await acp.GET("/v1/events/{event_id}", { params: { path: { event_id: `ts-missing-${suffix}` } } }), 404);
    });
}
