/**
 * Contract test: the generated TypeScript client (openapi-typescript types,
 * openapi-fetch calls, through `createAcpClient`) against a running service.
 *
 *   ACP_BASE_URL=http://127.0.0.1:8080 ACP_TOKEN=<operator token> node --test dist/test/contract.test.js
 *
 * `scripts/ts-client check` compiles this with tsc (strict) and runs it against
 * an `acp serve` of its own. Every call goes through the middleware of
 * harness.ts, which fails on anything the document does not declare and
 * records the operations exercised. The flows (flows/*.ts) run in order in
 * this one process, later ones using what earlier ones made; the last test
 * fails when an operation of openapi/openapi.json (read at run time) was not
 * exercised by any of them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { accessFlows } from "./flows/access.js";
import { activityFlows } from "./flows/activities.js";
import { eventFlows } from "./flows/events.js";
import { resourceFlows } from "./flows/resources.js";
import { runFlows } from "./flows/runs.js";
import { acp, exercised, ok, operations, problem, seen, state } from "./harness.js";

describe("activity-control-plane through the generated TypeScript client", () => {
    activityFlows();
    eventFlows();
    runFlows();
    resourceFlows();
    accessFlows();

    it("delete the activities (If-Match), their history stays", async () => {
        // Pause and resume changed the activity since the PATCH: a fresh ETag.
        const current = await acp.GET("/v1/activities/{id}", { params: { path: { id: state.activityId } } });
        ok(current, 200);
        state.activityEtag = current.response.headers.get("etag") ?? "";
        problem(
            await acp.DELETE("/v1/activities/{id}", {
                params: { path: { id: state.activityId }, header: { "If-Match": '"stale"' } },
            }),
            400,
            412,
        );
        const deleted = await acp.DELETE("/v1/activities/{id}", {
            params: { path: { id: state.activityId }, header: { "If-Match": state.activityEtag } },
        });
        assert.equal(deleted.response.status, 204);
        problem(await acp.GET("/v1/activities/{id}", { params: { path: { id: state.activityId } } }), 404);
        assert.equal((await acp.DELETE("/v1/activities/{id}", { params: { path: { id: state.eventActivityId } } })).response.status, 204);
        const history = ok(await acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: state.eventRunId } } }), 200);
        assert.equal(history.status, "succeeded");
    });

    it("every operation of openapi/openapi.json was exercised", () => {
        const missing = [...operations.keys()].filter((k) => !exercised.has(k)).sort();
        const summary = [...seen.entries()]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, s]) => `${k}: ${[...s].sort().join(",")}`)
            .join("\n");
        console.log(`operations exercised: ${exercised.size} of ${operations.size}\n${summary}`);
        assert.deepEqual(missing, [], `operations in openapi/openapi.json the contract test did not call: ${missing.join(", ")}`);
    });
});
