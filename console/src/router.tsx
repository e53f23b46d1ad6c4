import type { ComponentChildren, JSX } from "preact";
import { actingProject } from "./api/project";
import { signal, useSignal } from "./signal";

/** Where the console is served; every route is below it. */
export const BASE = import.meta.env.BASE_URL.replace(/\/+$/, "");

export interface Loc {
    /** The path below BASE and the project's prefix, starting with "/". */
    path: string;
    query: URLSearchParams;
    /** The project the address names (`/p/<project>/…`); null: none named. */
    project: string | null;
}

/** `/p/<project>` and the rest: each project's views have their own URLs. */
const IN_PROJECT = /^\/p\/([a-z][a-z0-9-]{0,62})(\/.*)?$/;
/** Views that belong to no one project: no project prefix. */
const ACROSS_PROJECTS = ["/projects"];

function read(): Loc {
    let p = location.pathname;
    if (p.startsWith(BASE)) p = p.slice(BASE.length);
    if (p === "") p = "/";
    const m = IN_PROJECT.exec(p);
    const project = m ? m[1]! : null;
    if (m) p = m[2] || "/";
    return { path: p, query: new URLSearchParams(location.search), project };
}

export const loc = signal<Loc>(read());
actingProject.value = loc.value.project;
// The API calls follow the address's project before any view reacts to it.
loc.subscribe((l) => {
    actingProject.value = l.project;
});

window.addEventListener("popstate", () => {
    loc.value = read();
});

export function useLoc(): Loc {
    return useSignal(loc);
}

/**
 * The URL of a console path with its query (empty values left out), in
 * `project` (by default the one the current address names).
 */
export function href(
    path: string,
    query?: Record<string, string | number | null | undefined | false> | URLSearchParams,
    project: string | null = loc.value.project,
): string {
    const q = new URLSearchParams();
    if (query instanceof URLSearchParams) {
        query.forEach((v, k) => {
            if (v !== "") q.append(k, v);
        });
    } else if (query) {
        for (const [k, v] of Object.entries(query)) {
            if (v !== null && v !== undefined && v !== false && v !== "") q.set(k, String(v));
        }
    }
    const s = q.toString();
    const across = ACROSS_PROJECTS.some((p) => path === p || path.startsWith(`${p}/`));
    const prefix = project && !across ? `/p/${project}` : "";
    return `${BASE}${prefix}${path}${s ? `?${s}` : ""}`;
}

export function navigate(url: string, replace = false): void {
    if (replace) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
    loc.value = read();
    if (!replace) window.scrollTo(0, 0);
}

/** Replaces some query parameters of the current URL (a filter change). */
export function setQuery(changes: Record<string, string | null | undefined>, replace = false): void {
    const q = new URLSearchParams(location.search);
    for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === undefined || v === "") q.delete(k);
        else q.set(k, v);
    }
    const s = q.toString();
    navigate(`${location.pathname}${s ? `?${s}` : ""}`, replace);
}

/** A real link that the router follows without a reload (plain clicks only). */
export function Link(props: JSX.AnchorHTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren }): JSX.Element {
    const { onClick, ...rest } = props;
    return (
        <a
            {...rest}
            onClick={(e) => {
                if (typeof onClick === "function") onClick(e);
                if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
                if (props.target && props.target !== "_self") return;
                e.preventDefault();
                navigate(props.href);
            }}
        />
    );
}

/** Matches `pattern` ("/activities/:id") against `path`; the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
    const a = pattern.split("/").filter(Boolean);
    const b = path.split("/").filter(Boolean);
    if (a.length !== b.length) return null;
    const out: Record<string, string> = {};
    for (let i = 0; i < a.length; i++) {
        const x = a[i]!;
        const y = b[i]!;
        if (x.startsWith(":")) out[x.slice(1)] = decodeURIComponent(y);
        else if (x !== y) return null;
    }
    return out;
}
