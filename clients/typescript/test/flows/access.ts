/** Keys and their scopes, projects, and the audit log of those writes. */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "node:test";
import { acp, client, ok, operations, problem, state, suffix } from "../harness.js";

export function accessFlows(): void {
    it("keys: create, use, list, get, revoke; scopes hold", async () => {
        const created = await acp.POST("/v1/keys", { body: { name: `ts-read-${suffix}`, scope: "read" } });
        const key = ok(created, 201);
        assert.equal(key.scope, "read");
        assert.ok(key.token.length > 20);
        assert.equal(key.revoked_at ?? null, null);

        const reader = client(key.token);
        ok(await reader.GET("/v1/activities/{id}", { params: { path: { id: state.activityId } } }), 200);
        const session = ok(await reader.GET("/v1/session"), 200);
        assert.equal(session.authentication, "required");
        assert.equal(session.scope, "read");
        assert.equal(session.key?.id, key.id);
        problem(await reader.POST("/v1/activities/{id}/pause", { params: { path: { id: state.activityId } } }), 403);
        problem(await reader.GET("/v1/keys"), 403);

        const list = ok(await acp.GET("/v1/keys"), 200);
        const listed = list.items.find((k) => k.id === key.id);
        assert.ok(listed, "the new key is listed");
        assert.ok(!("token" in listed), "a list never shows tokens");
        const one = ok(await acp.GET("/v1/keys/{id}", { params: { path: { id: key.id } } }), 200);
        assert.equal(one.name, key.name);

        const revoked = ok(await acp.POST("/v1/keys/{id}/revoke", { params: { path: { id: key.id } } }), 200);
        assert.ok(revoked.revoked_at, "revoked_at is set");
        problem(await reader.GET("/v1/activities/{id}", { params: { path: { id: state.activityId } } }), 401);
        problem(await reader.GET("/v1/session"), 401);
        problem(await acp.GET("/v1/keys/{id}", { params: { path: { id: randomUUID() } } }), 404);
    });

    it("projects: create, put, list, get, patch, delete; operator only", async () => {
        const id = `ts-${suffix}`;
        const created = ok(
            await acp.POST("/v1/projects", { body: { id, name: "TS contract", quotas: { activities: 5 } } }),
            201,
        );
        assert.equal(created.id, id);
        assert.equal(created.quotas.activities, 5);
        assert.equal(created.usage.activities, 0);
        const put = ok(
            await acp.PUT("/v1/projects/{id}", {
                params: { path: { id }, header: { "If-Match": `"${created.version}"` } },
                body: { name: "TS contract", weight: 3 },
            }),
            200,
        );
        assert.equal(put.weight, 3);
        assert.equal(put.quotas.activities ?? null, null);
        const list = ok(await acp.GET("/v1/projects"), 200);
        assert.ok(list.items.some((p) => p.id === id && p.id !== "default"));
        assert.ok(list.items.some((p) => p.id === "default"));
        const one = ok(await acp.GET("/v1/projects/{id}", { params: { path: { id } } }), 200);
        assert.equal(one.version, put.version);
        const patched = ok(
            await acp.PATCH("/v1/projects/{id}", {
                params: { path: { id }, header: { "If-Match": `"${put.version}"` } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { quotas: { sources: 1 } },
            }),
            200,
        );
        assert.equal(patched.quotas.sources, 1);

        const key = ok(await acp.POST("/v1/keys", { body: { name: `ts-admin-${suffix}`, scope: "admin", project: id } }), 201);
        assert.equal(key.project, id);
        const admin = client(key.token);
        const session = ok(await admin.GET("/v1/session"), 200);
        assert.equal(session.project, id);
        problem(await admin.GET("/v1/projects"), 403);
        problem(await acp.DELETE("/v1/projects/{id}", { params: { path: { id } } }), 409);
        ok(await acp.POST("/v1/keys/{id}/revoke", { params: { path: { id: key.id } } }), 200);
        const deleted = await acp.DELETE("/v1/projects/{id}", { params: { path: { id } } });
        assert.equal(deleted.response.status, 204);
        problem(await acp.GET("/v1/projects/{id}", { params: { path: { id } } }), 404);
        problem(await acp.DELETE("/v1/projects/{id}", { params: { path: { id: "default" } } }), 409);
    });

    it("audit: each write names its key, operation and subject", async () => {
        const revokes = ok(
            await acp.GET("/v1/audit", { params: { query: { operation: "revoke_key", limit: 1 } } }),
            200,
        );
        const last = revokes.items[0];
        assert.ok(last, "the revoke above is recorded");
        assert.equal(last.subject_type, "api_key");
        assert.equal(last.operation, "revoke_key");
        assert.ok(last.request_id.length > 0);
        assert.notEqual(last.change["after"], null);
        const onActivity = ok(
            await acp.GET("/v1/audit", {
                params: { query: { subject_type: "activity", subject_id: state.activityId, limit: 200 } },
            }),
            200,
        );
        const ops = onActivity.items.map((e) => e.operation);
        assert.ok(ops.includes("pause_activity"), `operations: ${ops.join(", ")}`);
        problem(await acp.GET("/v1/audit", { params: { query: { subject_type: "planet" } } }), 400);
    });
}
