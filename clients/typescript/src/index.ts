/**
 * A typed client for the activity-control-plane REST API.
 *
 * `schema.ts` is generated from the committed `openapi/openapi.json` by
 * openapi-typescript (`scripts/ts-client generate`); do not edit it by hand.
 * The calls go through openapi-fetch, so every path, parameter, body and
 * answer is typed by the document:
 *
 *   const acp = createAcpClient({ baseUrl: "http://127.0.0.1:8080", token });
 *   const { data, error, response } = await acp.GET("/v1/activities/{id}", {
 *     params: { path: { id } },
 *   });
 *
 * A 2xx answer is in `data`, any other in `error` (an RFC 9457 problem
 * document: `type`, `title`, `status`, `detail`, `errors[]`), and
 * `response` is the raw `Response` (status, `ETag`, `Location`).
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The client: openapi-fetch's, typed by the generated `paths`. */
export type AcpClient = Client<paths>;

/** Every named schema of the document, e.g. `Schemas["ActivityRequest"]`. */
export type Schemas = components["schemas"];

/** An error answer's body (RFC 9457, `application/problem+json`). */
export type Problem = components["schemas"]["Problem"];

export interface AcpClientOptions {
    /** Where the service listens, e.g. `http://127.0.0.1:8080` (no `/v1`). */
    baseUrl: string;
    /** An API key's token; sent as `Authorization: Bearer <token>`. */
    token?: string;
    /** Extra headers sent with every request. */
    headers?: Record<string, string>;
    /** A fetch to use instead of the global one (tests, proxies). */
    fetch?: ClientOptions["fetch"];
}

/** A client for the service at `baseUrl`, authenticated with `token` when one is given. */
export function createAcpClient({ baseUrl, token, headers, fetch }: AcpClientOptions): AcpClient {
    const all: Record<string, string> = { ...headers };
    if (token !== undefined && token !== "") {
        all["authorization"] = `Bearer ${token}`;
    }
    return createClient<paths>({
        // The document's paths start with "/": no trailing slash, or URLs
        // would have "//" in them.
        baseUrl: baseUrl.replace(/\/+$/, ""),
        headers: all,
        ...(fetch === undefined ? {} : { fetch }),
    });
}
