/**
 * Contract test: the generated TypeScript client (openapi-typescript types,
 * openapi-fetch calls, through `createAcpClient`) against a running service.
 *
 *   ACP_BASE_URL=http://127.0.0.1:8080 ACP_TOKEN=<admin token> node --test dist/test/
 *
 * `scripts/ts-client check` compiles this with tsc (strict) and runs it against
 * an `acp serve` of its own. Every call goes through one openapi-fetch
 * middleware that
 *   - marks `METHOD /path/{template}` as exercised (openapi-fetch hands it the
 *     schema path the call was typed against),
 *   - fails on an operation the document does not have, a request media type
 *     the operation does not declare, a status it does not declare, a response
 *     media type the status does not declare, or a JSON body that does not
 *     match the status's schema (a small JSON Schema check, below).
 * The last test fails when an operation of openapi/openapi.json (read at run
 * time) was not exercised. CloudEvents are sent to whichever operations the
 * document says take them (structured, batch and binary mode), so the test
 * follows the document if they move.
 */
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Middleware } from "openapi-fetch";

import { type AcpClient, createAcpClient, type Problem, type Schemas } from "../src/index.js";

// ---------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** openapi/openapi.json: ACP_OPENAPI if set, else found walking up from here. */
function documentPath(): string {
    const given = process.env["ACP_OPENAPI"];
    if (given !== undefined && given !== "") {
        return resolve(given);
    }
    let dir = dirname(fileURLToPath(import.meta.url));
    for (;;) {
        const candidate = join(dir, "openapi", "openapi.json");
        if (existsSync(candidate)) {
            return candidate;
        }
        const parent = dirname(dir);
        if (parent === dir) {
            throw new Error("openapi/openapi.json not found above " + fileURLToPath(import.meta.url) + "; set ACP_OPENAPI");
        }
        dir = parent;
    }
}

const doc = JSON.parse(readFileSync(documentPath(), "utf8")) as JsonObject;

function obj(value: Json | undefined): JsonObject {
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
}

interface Operation {
    key: string;
    method: string;
    path: string;
    op: JsonObject;
}

/** Every operation of the document, by `METHOD /path/{template}`. */
const operations = new Map<string, Operation>();
for (const [path, item] of Object.entries(obj(doc["paths"]))) {
    for (const method of HTTP_METHODS) {
        const op = obj(item)[method];
        if (op !== undefined) {
            const key = `${method.toUpperCase()} ${path}`;
            operations.set(key, { key, method, path, op: obj(op) });
        }
    }
}

function requestMediaTypes(op: Operation): string[] {
    return Object.keys(obj(obj(op.op["requestBody"])["content"]));
}

function headerParameters(op: Operation): string[] {
    const params = op.op["parameters"];
    return (Array.isArray(params) ? params : [])
        .map((p) => obj(p))
        .filter((p) => p["in"] === "header")
        .map((p) => String(p["name"]).toLowerCase());
}

// ---------------------------------------------------------------------------
// A small JSON Schema check (what the document uses: $ref, allOf, oneOf,
// anyOf, type lists, enum, const, required, properties, additionalProperties
// false, items). Formats are not checked.
// ---------------------------------------------------------------------------

function resolveRef(ref: string): JsonObject {
    if (!ref.startsWith("#/")) {
        throw new Error(`external $ref ${ref}`);
    }
    let node: Json | undefined = doc;
    for (const part of ref.slice(2).split("/")) {
        node = obj(node)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
        if (node === undefined) {
            throw new Error(`unresolvable $ref ${ref}`);
        }
    }
    return obj(node);
}

function typeOf(value: Json): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
    return typeof value;
}

/** Problems of `value` against `schema`, each naming its JSON path. */
function validate(schema: JsonObject, value: Json, at: string, depth = 0): string[] {
    if (depth > 64) {
        return [];
    }
    const ref = schema["$ref"];
    if (typeof ref === "string") {
        let target: JsonObject;
        try {
            target = resolveRef(ref);
        } catch (e) {
            return [`${at}: ${(e as Error).message}`];
        }
        return validate(target, value, at, depth + 1);
    }
    const errors: string[] = [];
    const allOf = schema["allOf"];
    if (Array.isArray(allOf)) {
        for (const s of allOf) errors.push(...validate(obj(s), value, at, depth + 1));
    }
    for (const keyword of ["oneOf", "anyOf"] as const) {
        const alternatives = schema[keyword];
        if (Array.isArray(alternatives) && alternatives.length > 0) {
            const results = alternatives.map((s) => validate(obj(s), value, at, depth + 1));
            if (!results.some((r) => r.length === 0)) {
                errors.push(`${at}: matches none of ${keyword} (${results.map((r) => r[0]).join("; ")})`);
            }
        }
    }
    const type = schema["type"];
    if (type !== undefined) {
        const types = (Array.isArray(type) ? type : [type]).map(String);
        const actual = typeOf(value);
        if (!types.includes(actual) && !(actual === "integer" && types.includes("number"))) {
            return [...errors, `${at}: is ${actual}, schema says ${types.join(" | ")}`];
        }
    }
    const enumValues = schema["enum"];
    if (Array.isArray(enumValues) && !enumValues.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
        errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(enumValues)}`);
    }
    if ("const" in schema && JSON.stringify(schema["const"]) !== JSON.stringify(value)) {
        errors.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema["const"])}`);
    }
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        const props = obj(schema["properties"]);
        const required = schema["required"];
        for (const name of Array.isArray(required) ? required : []) {
            if (!(String(name) in value)) errors.push(`${at}: required property ${String(name)} is missing`);
        }
        for (const [name, v] of Object.entries(value)) {
            const s = props[name];
            if (s !== undefined) {
                errors.push(...validate(obj(s), v, `${at}.${name}`, depth + 1));
            } else if (schema["additionalProperties"] === false) {
                errors.push(`${at}: property ${name} is not in the schema`);
            } else if (typeof schema["additionalProperties"] === "object") {
                errors.push(...validate(obj(schema["additionalProperties"]), v, `${at}.${name}`, depth + 1));
            }
        }
    }
    if (Array.isArray(value) && schema["items"] !== undefined) {
        value.forEach((v, i) => errors.push(...validate(obj(schema["items"]), v, `${at}[${i}]`, depth + 1)));
    }
    return errors;
}

// ---------------------------------------------------------------------------
// The contract middleware
// ---------------------------------------------------------------------------

/** `METHOD /path/{template}` of every operation a call was made to. */
const exercised = new Set<string>();
/** Every status seen per operation (for the summary). */
const seen = new Map<string, Set<number>>();

function mediaType(contentType: string | null): string {
    return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

const contract: Middleware = {
    onRequest({ request, schemaPath }) {
        const key = `${request.method.toUpperCase()} ${schemaPath}`;
        const op = operations.get(key);
        if (op === undefined) {
            throw new Error(`${key}: the client called an operation openapi/openapi.json does not have`);
        }
        const sent = request.headers.get("content-type");
        if (request.body !== null && sent !== null) {
            const declared = requestMediaTypes(op).map((m) => m.toLowerCase());
            assert.ok(
                declared.includes(mediaType(sent)),
                `${key}: request sent as ${sent}, the document declares ${declared.join(", ") || "no body"}`,
            );
        }
        return undefined;
    },
    async onResponse({ request, response, schemaPath }) {
        const key = `${request.method.toUpperCase()} ${schemaPath}`;
        const op = operations.get(key)!;
        exercised.add(key);
        const statuses = seen.get(key) ?? new Set<number>();
        statuses.add(response.status);
        seen.set(key, statuses);

        const responses = obj(op.op["responses"]);
        const declared = responses[String(response.status)] ?? responses["default"];
        // An event stream never ends: its events are checked by the test
        // that reads them, here only that it is declared.
        if (mediaType(response.headers.get("content-type")) === "text/event-stream") {
            assert.ok(declared !== undefined, `${key} answered ${response.status}, which the document does not declare`);
            assert.ok(obj(obj(declared)["content"])["text/event-stream"] !== undefined, `${key}: text/event-stream not declared`);
            return undefined;
        }
        const body = await response.clone().text();
        if (declared === undefined) {
            assert.fail(
                `${key} answered ${response.status}, which the document does not declare ` +
                    `(declared: ${Object.keys(responses).join(", ")}); body: ${body.slice(0, 500)}`,
            );
        }
        const content = obj(obj(declared)["content"]);
        const got = mediaType(response.headers.get("content-type"));
        if (body === "") {
            return undefined;
        }
        if (Object.keys(content).length === 0) {
            assert.fail(`${key} ${response.status}: the document declares no body, the service sent ${got}: ${body.slice(0, 300)}`);
        }
        const entry = Object.entries(content).find(([m]) => m.toLowerCase() === got);
        assert.ok(
            entry !== undefined,
            `${key} ${response.status}: content type ${got}, the document declares ${Object.keys(content).join(", ")}`,
        );
        const schema = obj(obj(entry[1])["schema"]);
        if (got === "application/json" || got.endsWith("+json")) {
            let parsed: Json;
            try {
                parsed = JSON.parse(body) as Json;
            } catch {
                assert.fail(`${key} ${response.status}: ${got} body is not JSON: ${body.slice(0, 300)}`);
            }
            const errors = validate(schema, parsed, "$");
            assert.deepEqual(errors, [], `${key} ${response.status}: the body does not match the document's schema`);
        }
        return undefined;
    },
};

// ---------------------------------------------------------------------------
// Clients and helpers
// ---------------------------------------------------------------------------

function env(name: string): string {
    const value = process.env[name];
    if (value === undefined || value === "") {
        throw new Error(`${name} is not set (see the top of this file)`);
    }
    return value;
}

const baseUrl = env("ACP_BASE_URL");
const acp = createAcpClient({ baseUrl, token: env("ACP_TOKEN") });
acp.use(contract);

function client(token?: string): AcpClient {
    const c = createAcpClient(token === undefined ? { baseUrl } : { baseUrl, token });
    c.use(contract);
    return c;
}

interface Answer<D> {
    data?: D;
    error?: unknown;
    response: Response;
}

/** The 2xx body of `answer`, after checking its status is one of `expected`. */
function ok<D>(answer: Answer<D>, ...expected: number[]): D {
    const { response } = answer;
    assert.ok(
        expected.includes(response.status),
        `${response.url}: expected ${expected.join(" or ")}, got ${response.status}: ${JSON.stringify(answer.error)}`,
    );
    assert.notEqual(answer.data, undefined, `${response.url}: ${response.status} without a body`);
    return answer.data as D;
}

/** The problem document of a non-2xx `answer`, after checking its status. */
function problem(answer: Answer<unknown>, ...expected: number[]): Problem {
    const { response } = answer;
    assert.ok(
        expected.includes(response.status),
        `${response.url}: expected ${expected.join(" or ")}, got ${response.status}: ${JSON.stringify(answer.data ?? answer.error)}`,
    );
    assert.equal(mediaType(response.headers.get("content-type")), "application/problem+json");
    const p = answer.error as Problem;
    assert.equal(p.status, response.status, "a problem's status is the response's");
    assert.equal(typeof p.title, "string");
    return p;
}

async function until<T>(what: string, get: () => Promise<T>, done: (value: T) => boolean, seconds = 45): Promise<T> {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
        const value = await get();
        if (done(value)) {
            return value;
        }
        if (Date.now() > deadline) {
            assert.fail(`timed out after ${seconds}s waiting for ${what}; last: ${JSON.stringify(value)}`);
        }
        await new Promise((r) => setTimeout(r, 250));
    }
}

/** Calls to an operation found in the document at run time (the CloudEvents
 * modes): openapi-fetch's `request`, typed loosely because the path is only
 * known then. The middleware still checks it against the document. */
async function dynamicCall(op: Operation, init: Record<string, unknown>): Promise<Answer<unknown>> {
    const request = acp.request as unknown as (
        method: string,
        path: string,
        init: Record<string, unknown>,
    ) => Promise<Answer<unknown>>;
    return request(op.method, op.path, init);
}

const suffix = randomBytes(4).toString("hex");
const label = `ts-contract-${suffix}`;
const eventType = `ts.order.created.${suffix}`;

const cronTrigger: Schemas["CronTrigger"] = {
    type: "cron",
    cron: "*/5 * * * *",
    timezone: "Europe/Berlin",
    misfire_policy: "skip",
};

function cronActivity(name: string): Schemas["ActivityRequest"] {
    return { name, labels: { suite: label }, trigger: cronTrigger, tasks: [{ task_type: "noop" }] };
}

/** The latest multiple of five minutes (UTC) at or before now. */
function fiveMinuteFloor(): Date {
    const t = new Date();
    t.setUTCSeconds(0, 0);
    t.setUTCMinutes(t.getUTCMinutes() - (t.getUTCMinutes() % 5));
    return t;
}

// State the steps hand on.
let activityId = "";
let activityEtag = "";
let eventActivityId = "";
let eventRunId = "";
let jsonEventId = "";

// ---------------------------------------------------------------------------
// The flows
// ---------------------------------------------------------------------------

describe("activity-control-plane through the generated TypeScript client", () => {
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
        activityId = created.id;
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

        const got = await acp.GET("/v1/activities/{id}", { params: { path: { id: activityId } } });
        const activity = ok(got, 200);
        assert.equal(activity.id, activityId);
        assert.equal(activity.version, created.version);
        activityEtag = got.response.headers.get("etag") ?? "";
        assert.ok(activityEtag, "GET carries an ETag");

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
            params: { path: { id: activityId }, header: { "If-Match": activityEtag } },
            headers: { "content-type": "application/merge-patch+json" },
            body: { description: "patched by the TypeScript client", labels: { suite: label, patched: "yes" } },
        });
        const activity = ok(patched, 200);
        assert.equal(activity.description, "patched by the TypeScript client");
        assert.equal(activity.labels["patched"], "yes");
        assert.ok(activity.trigger.type === "cron", "a cron trigger");
        assert.equal(activity.trigger.cron, "*/5 * * * *", "fields not in the patch stay");
        const stale = activityEtag;
        activityEtag = patched.response.headers.get("etag") ?? "";
        assert.ok(activityEtag && activityEtag !== stale, "a new ETag");

        problem(
            await acp.PATCH("/v1/activities/{id}", {
                params: { path: { id: activityId }, header: { "If-Match": stale } },
                headers: { "content-type": "application/merge-patch+json" },
                body: { description: "lost update" },
            }),
            412,
        );
    });

    it("pause and resume without a body; the live schedule shows it", async () => {
        const paused = ok(await acp.POST("/v1/activities/{id}/pause", { params: { path: { id: activityId } } }), 200);
        assert.equal(paused.paused, true);
        assert.equal(paused.activity_id, activityId);
        const schedule = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: activityId } } }), 200);
        assert.equal(schedule.paused, true);
        assert.equal(schedule.schedule_id, `activity-${activityId}`);

        // A dry run answers what a resume would do and leaves it paused.
        const dry = ok(
            await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: activityId } }, body: { dry_run: true } }),
            200,
        );
        assert.equal(dry.dry_run, true);
        assert.equal(dry.paused, true);
        assert.ok(dry.missed, "a paused activity's dry run answers its missed times");
        const still = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: activityId } } }), 200);
        assert.equal(still.paused, true);

        const resumed = ok(await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: activityId } } }), 200);
        assert.equal(resumed.paused, false);
        assert.equal(resumed.dry_run, false);

        // With a body, the note arrives.
        const noted = ok(
            await acp.POST("/v1/activities/{id}/pause", { params: { path: { id: activityId } }, body: { note: "maintenance" } }),
            200,
        );
        assert.equal(noted.note, "maintenance");
        ok(await acp.POST("/v1/activities/{id}/resume", { params: { path: { id: activityId } }, body: { note: "done" } }), 200);
        const live = ok(await acp.GET("/v1/activities/{id}/schedule", { params: { path: { id: activityId } } }), 200);
        assert.equal(live.paused, false);
        assert.ok(live.next_fire_times.length > 0);
    });

    it("trigger: one manual run per Idempotency-Key", async () => {
        const key = `ts-trigger-${suffix}`;
        const started = ok(
            await acp.POST("/v1/activities/{id}/trigger", {
                params: { path: { id: activityId }, header: { "Idempotency-Key": key } },
            }),
            202,
        );
        assert.equal(started.key, key);
        assert.equal(started.workflow_id, `activity-${activityId}:manual-${key}`);
        const again = ok(
            await acp.POST("/v1/activities/{id}/trigger", {
                params: { path: { id: activityId }, header: { "Idempotency-Key": key } },
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
                params: { path: { id: activityId } },
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
                    path: { id: activityId },
                    query: { from: start.toISOString(), to: new Date(end.getTime() + 3600_000).toISOString() },
                },
            }),
            200,
        );
        assert.equal(timeline.items.length, 24);
        for (const entry of timeline.items) {
            assert.ok(entry.workflow_id.startsWith(`activity-${activityId}:`), entry.workflow_id);
        }
        problem(
            await acp.GET("/v1/activities/{id}/timeline", {
                params: { path: { id: activityId }, query: { from: end.toISOString(), to: start.toISOString() } },
            }),
            400,
            422,
        );
    });

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
        eventActivityId = created.id;
        assert.equal(created.schedule.sync_state, "not_applicable");

        jsonEventId = `ts-json-${suffix}`;
        const event: Schemas["EventRequest"] = {
            event_id: jsonEventId,
            event_type: eventType,
            source: "ts-contract",
            payload: { order: 1, customer: "c-1" },
        };
        // Prefer: wait starts the run within the request, so its outcome is known.
        const first = await acp.POST("/v1/events", { params: { header: { Prefer: "wait=10" } }, body: event });
        const ingested = ok(first, 200, 202);
        assert.equal(ingested.dispatches[0]?.outcome, "started", JSON.stringify(ingested));
        assert.equal(ingested.event_id, jsonEventId);
        assert.equal(ingested.event_id_origin, "client");
        assert.equal(ingested.dispatches.length, 1);
        const dispatch = ingested.dispatches[0]!;
        assert.equal(dispatch.activity_id, eventActivityId);
        assert.equal(dispatch.workflow_id, `activity-${eventActivityId}:${jsonEventId}`);
        eventRunId = dispatch.run_id;

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
            assert.equal(result.dispatches[0]?.activity_id, eventActivityId);
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
        assert.ok(list.items.some((e) => e.event_id === jsonEventId), "the JSON event is listed");
        for (const e of list.items) assert.equal(e.event_type, eventType);
        const event = ok(await acp.GET("/v1/events/{event_id}", { params: { path: { event_id: jsonEventId } } }), 200);
        assert.deepEqual(event.payload, { order: 1, customer: "c-1" });
        assert.equal(event.dispatches?.[0]?.activity_id, eventActivityId);
        problem(await acp.GET("/v1/events/{event_id}", { params: { path: { event_id: `ts-missing-${suffix}` } } }), 404);
    });

    it("runs: get, list, and a finished run refuses cancel and retry with a 409", async () => {
        const run = ok(
            await until(
                "the event's run to succeed",
                () => acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: eventRunId } } }),
                (r) => r.data?.status === "succeeded",
            ),
            200,
        );
        assert.equal(run.trigger_type, "event");
        assert.equal(run.event_id, jsonEventId);
        assert.equal(run.tasks?.[0]?.status, "succeeded");

        const all = ok(await acp.GET("/v1/runs", { params: { query: { activity_id: eventActivityId, limit: 100 } } }), 200);
        assert.ok(all.items.some((r) => r.run_id === eventRunId));
        for (const r of all.items) assert.equal(r.activity_id, eventActivityId);
        const mine = ok(
            await acp.GET("/v1/activities/{id}/runs", { params: { path: { id: eventActivityId }, query: { trigger_type: "event" } } }),
            200,
        );
        assert.ok(mine.items.some((r) => r.run_id === eventRunId));

        const cancel = problem(
            await acp.POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: eventRunId } }, body: { reason: "too late" } }),
            409,
        );
        assert.match(`${cancel.detail ?? ""} ${cancel.title}`, /succeeded/);
        const retry = problem(await acp.POST("/v1/runs/{run_id}/retry", { params: { path: { run_id: eventRunId } } }), 409);
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
                activity_id: activityId,
                description: "ts contract",
            },
        });
        const sub = ok(created, 201);
        assert.equal(sub.url, "http://127.0.0.1:9/hook");
        assert.deepEqual([...sub.types].sort(), ["alert.opened", "run.failed"]);
        assert.equal(sub.activity_id, activityId);
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

    it("keys: create, use, list, get, revoke; scopes hold", async () => {
        const created = await acp.POST("/v1/keys", { body: { name: `ts-read-${suffix}`, scope: "read" } });
        const key = ok(created, 201);
        assert.equal(key.scope, "read");
        assert.ok(key.token.length > 20);
        assert.equal(key.revoked_at ?? null, null);

        const reader = client(key.token);
        ok(await reader.GET("/v1/activities/{id}", { params: { path: { id: activityId } } }), 200);
        const session = ok(await reader.GET("/v1/session"), 200);
        assert.equal(session.authentication, "required");
        assert.equal(session.scope, "read");
        assert.equal(session.key?.id, key.id);
        problem(await reader.POST("/v1/activities/{id}/pause", { params: { path: { id: activityId } } }), 403);
        problem(await reader.GET("/v1/keys"), 403);

        const list = ok(await acp.GET("/v1/keys"), 200);
        const listed = list.items.find((k) => k.id === key.id);
        assert.ok(listed, "the new key is listed");
        assert.ok(!("token" in listed), "a list never shows tokens");
        const one = ok(await acp.GET("/v1/keys/{id}", { params: { path: { id: key.id } } }), 200);
        assert.equal(one.name, key.name);

        const revoked = ok(await acp.POST("/v1/keys/{id}/revoke", { params: { path: { id: key.id } } }), 200);
        assert.ok(revoked.revoked_at, "revoked_at is set");
        problem(await reader.GET("/v1/activities/{id}", { params: { path: { id: activityId } } }), 401);
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
                params: { query: { subject_type: "activity", subject_id: activityId, limit: 200 } },
            }),
            200,
        );
        const ops = onActivity.items.map((e) => e.operation);
        assert.ok(ops.includes("pause_activity"), `operations: ${ops.join(", ")}`);
        problem(await acp.GET("/v1/audit", { params: { query: { subject_type: "planet" } } }), 400);
    });

    it("delete the activities (If-Match), their history stays", async () => {
        // Pause and resume changed the activity since the PATCH: a fresh ETag.
        const current = await acp.GET("/v1/activities/{id}", { params: { path: { id: activityId } } });
        ok(current, 200);
        activityEtag = current.response.headers.get("etag") ?? "";
        problem(
            await acp.DELETE("/v1/activities/{id}", {
                params: { path: { id: activityId }, header: { "If-Match": '"stale"' } },
            }),
            400,
            412,
        );
        const deleted = await acp.DELETE("/v1/activities/{id}", {
            params: { path: { id: activityId }, header: { "If-Match": activityEtag } },
        });
        assert.equal(deleted.response.status, 204);
        problem(await acp.GET("/v1/activities/{id}", { params: { path: { id: activityId } } }), 404);
        assert.equal((await acp.DELETE("/v1/activities/{id}", { params: { path: { id: eventActivityId } } })).response.status, 204);
        const history = ok(await acp.GET("/v1/runs/{run_id}", { params: { path: { run_id: eventRunId } } }), 200);
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
