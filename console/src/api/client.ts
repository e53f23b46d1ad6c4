import { createAcpClient, type AcpClient, type operations, type Problem, type Schemas } from "@acp/client";
import { signal } from "../signal";
import { actingProject } from "./project";

export type { Schemas };
export type Activity = Schemas["ActivityResponse"];
export type Run = Schemas["RunResponse"];
export type Trigger = Schemas["TriggerBody"];
export type RunStatus = Schemas["RunStatus"];
export type Scope = Schemas["Scope"];

/** The query parameters of the API operation `op` (its operationId). */
export type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

/** `GET /v1/session`: whether authentication is on, the key and its scope. */
export type Session = Schemas["SessionResponse"];

const KEY = "acp.console.token";
/** The request header naming the project a call acts in. */
const PROJECT_HEADER = "Acp-Project";

/** The API key, kept in sessionStorage only. */
export function storedToken(): string | null {
    try {
        return sessionStorage.getItem(KEY);
    } catch {
        return null;
    }
}

export function storeToken(token: string | null): void {
    try {
        if (token === null) sessionStorage.removeItem(KEY);
        else sessionStorage.setItem(KEY, token);
    } catch {
        /* storage unavailable: the key lives in memory only */
    }
}

/** The signed-in state every view reads. */
export const auth = signal<{ state: "checking" } | { state: "prompt"; message?: string } | { state: "in"; session: Session }>({
    state: "checking",
});

let client: AcpClient = makeClient(storedToken());

function makeClient(token: string | null): AcpClient {
    const c = createAcpClient({ baseUrl: location.origin, token: token ?? undefined });
    c.use({
        onRequest({ request }) {
            // The project the address names is the one every call acts in;
            // the service ignores the header where an operation takes none.
            const project = actingProject.value;
            if (project !== null) request.headers.set(PROJECT_HEADER, project);
            return request;
        },
        onResponse({ response }) {
            if (response.status === 401 && auth.value.state === "in") {
                signOut("The API key was refused (revoked or expired). Enter a key to continue.");
            }
            return undefined;
        },
    });
    return c;
}

/** The typed client with the current key. */
export function acp(): AcpClient {
    return client;
}

export function signOut(message?: string): void {
    storeToken(null);
    client = makeClient(null);
    auth.value = message === undefined ? { state: "prompt" } : { state: "prompt", message };
}

/** Asks `GET /v1/session` with `token` (or none); signs in on success. */
export async function signIn(token: string | null): Promise<string | null> {
    const c = makeClient(token);
    let res;
    try {
        res = await c.GET("/v1/session");
    } catch (e) {
        return `The service did not answer: ${String(e)}`;
    }
    if (res.data) {
        client = c;
        if (token !== null && res.data.authentication === "required") storeToken(token);
        auth.value = { state: "in", session: res.data };
        return null;
    }
    if (res.response.status === 401) {
        storeToken(null);
        return token === null ? "" : "That key was refused.";
    }
    return problemText(res.error, res.response);
}

/** What the signed-in key may do. */
export function can(what: "read" | "write" | "admin"): boolean {
    const a = auth.value;
    if (a.state !== "in") return false;
    const s = a.session.scope;
    // An operator key may do everything an admin key may, and more.
    if (s === "admin" || s === "operator") return true;
    if (what === "write") return s === "write";
    if (what === "read") return s === "write" || s === "read";
    return false;
}

export function problemText(error: unknown, response?: Response): string {
    if (error && typeof error === "object") {
        const p = error as Partial<Problem>;
        const parts = [p.title ?? `HTTP ${response?.status ?? "?"}`];
        if (p.detail) parts.push(p.detail);
        if (Array.isArray(p.errors)) {
            for (const f of p.errors) parts.push(`${f.field}: ${f.message}`);
        }
        return parts.join(" — ");
    }
    return response ? `HTTP ${response.status} ${response.statusText}` : String(error);
}

export class ApiError extends Error {
    constructor(
        message: string,
        readonly status: number,
        readonly problem: unknown,
    ) {
        super(message);
    }
}

/** Unwraps an openapi-fetch answer: its data, or an ApiError. */
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await p;
    if (data !== undefined && response.ok) return data;
    if (response.ok) return undefined as T;
    throw new ApiError(problemText(error, response), response.status, error);
}
