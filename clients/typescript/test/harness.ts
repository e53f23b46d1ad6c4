/**
 * The contract test's machinery: the document read at run time, the
 * openapi-fetch middleware that checks every call against it and records
 * which operations were exercised, the clients, and the helpers the flows
 * share (see contract.test.ts, which runs the flows in order).
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

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/** openapi/openapi.json: ACP_OPENAPI if set, else found walking up from here. */
export function documentPath(): string {
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

export const doc = JSON.parse(readFileSync(documentPath(), "utf8")) as JsonObject;

export function obj(value: Json | undefined): JsonObject {
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
}

export interface Operation {
    key: string;
    method: string;
    path: string;
    op: JsonObject;
}

/** Every operation of the document, by `METHOD /path/{template}`. */
export const operations = new Map<string, Operation>();
for (const [path, item] of Object.entries(obj(doc["paths"]))) {
    for (const method of HTTP_METHODS) {
        const op = obj(item)[method];
        if (op !== undefined) {
            const key = `${method.toUpperCase()} ${path}`;
            operations.set(key, { key, method, path, op: obj(op) });
        }
    }
}

export function requestMediaTypes(op: Operation): string[] {
    return Object.keys(obj(obj(op.op["requestBody"])["content"]));
}

export function headerParameters(op: Operation): string[] {
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

export function resolveRef(ref: string): JsonObject {
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

export function typeOf(value: Json): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
    return typeof value;
}

/** Problems of `value` against `schema`, each naming its JSON path. */
export function validate(schema: JsonObject, value: Json, at: string, depth = 0): string[] {
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
export const exercised = new Set<string>();
/** Every status seen per operation (for the summary). */
export const seen = new Map<string, Set<number>>();

export function mediaType(contentType: string | null): string {
    return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

export const contract: Middleware = {
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

export function env(name: string): string {
    const value = process.env[name];
    if (value === undefined || value === "") {
        throw new Error(`${name} is not set (see the top of this file)`);
    }
    return value;
}

export const baseUrl = env("ACP_BASE_URL");
export const acp = createAcpClient({ baseUrl, token: env("ACP_TOKEN") });
acp.use(contract);

export function client(token?: string): AcpClient {
    const c = createAcpClient(token === undefined ? { baseUrl } : { baseUrl, token });
    c.use(contract);
    return c;
}

export interface Answer<D> {
    data?: D;
    error?: unknown;
    response: Response;
}

/** The 2xx body of `answer`, after checking its status is one of `expected`. */
export function ok<D>(answer: Answer<D>, ...expected: number[]): D {
    const { response } = answer;
    assert.ok(
        expected.includes(response.status),
        `${response.url}: expected ${expected.join(" or ")}, got ${response.status}: ${JSON.stringify(answer.error)}`,
    );
    assert.notEqual(answer.data, undefined, `${response.url}: ${response.status} without a body`);
    return answer.data as D;
}

/** The problem document of a non-2xx `answer`, after checking its status. */
export function problem(answer: Answer<unknown>, ...expected: number[]): Problem {
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

export async function until<T>(what: string, get: () => Promise<T>, done: (value: T) => boolean, seconds = 45): Promise<T> {
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
export async function dynamicCall(op: Operation, init: Record<string, unknown>): Promise<Answer<unknown>> {
    const request = acp.request as unknown as (
        method: string,
        path: string,
        init: Record<string, unknown>,
    ) => Promise<Answer<unknown>>;
    return request(op.method, op.path, init);
}

export const suffix = randomBytes(4).toString("hex");
export const label = `ts-contract-${suffix}`;
export const eventType = `ts.order.created.${suffix}`;

export const cronTrigger: Schemas["CronTrigger"] = {
    type: "cron",
    cron: "*/5 * * * *",
    timezone: "Europe/Berlin",
    misfire_policy: "skip",
};

export function cronActivity(name: string): Schemas["ActivityRequest"] {
    return { name, labels: { suite: label }, trigger: cronTrigger, tasks: [{ task_type: "noop" }] };
}

/** The latest multiple of five minutes (UTC) at or before now. */
export function fiveMinuteFloor(): Date {
    const t = new Date();
    t.setUTCSeconds(0, 0);
    t.setUTCMinutes(t.getUTCMinutes() - (t.getUTCMinutes() % 5));
    return t;
}

/** What the flows hand on to later ones. */
export const state = {
    activityId: "",
    activityEtag: "",
    eventActivityId: "",
    eventRunId: "",
    jsonEventId: "",
};
